package auth

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// X509 authentication (Apache's X509AuthenticationProvider): a TLS
// client's verified certificate gives the session the id x509:<subject>,
// and super:<subject> too when the subject is the configured super user.

// ErrName: a certificate subject that is not a well-formed X.500 name.
var ErrName = errors.New("auth: malformed certificate subject")

// X509ID returns a certificate's subject as Apache names the client:
// X500Principal.getName(), the RFC 2253 form as Java renders it. Java's
// form differs from Go's pkix.Name.String: only CN, C, L, ST, O, OU,
// STREET, DC and UID get keywords (others, such as the e-mail address and
// serial number, are dotted OIDs with the value's DER in hex); the value is
// decoded from its original string type; and Java escapes , = + < > # ; "
// and \ anywhere, and spaces (and carriage returns) at either end.
func X509ID(cert *x509.Certificate) (string, error) {
	return rfc2253(cert.RawSubject)
}

// attributeSET is one relative distinguished name; encoding/asn1 reads a
// type whose name ends in SET as an ASN.1 SET.
type attributeSET []attribute

type attribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rfc2253Keywords are the attribute types Java's X500Name renders by name
// in RFC 2253 form (AVAKeyword entries marked RFC 2253 compliant).
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// rfc2253 renders a DER Name: RDNs last to first, joined by commas;
// the attributes of one RDN in encoded order, joined by plus signs.
func rfc2253(der []byte) (string, error) {
	var rdns []attributeSET
	rest, err := asn1.Unmarshal(der, &rdns)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrName, err)
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("%w: trailing data", ErrName)
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, a := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAttribute(&b, a)
		}
	}
	return b.String(), nil
}

func writeAttribute(b *strings.Builder, a attribute) {
	kw, ok := rfc2253Keywords[a.Type.String()]
	if !ok {
		kw = a.Type.String()
	}
	b.WriteString(kw)
	b.WriteByte('=')
	s, isString := derString(a.Value)
	if !ok || !isString {
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(a.Value.FullBytes))
		return
	}
	b.WriteString(escapeValue(s))
}

// derString decodes the string types Java's AVA treats as strings in RFC
// 2253 form (isDerString, non-canonical).
func derString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String:
		return strings.ToValidUTF8(string(v.Bytes), "\uFFFD"), true
	case asn1.TagPrintableString, asn1.TagIA5String, asn1.TagT61String, asn1.TagGeneralString:
		return latin1(v.Bytes), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// escapeValue escapes as Java's AVA.toRFC2253String: the special
// characters anywhere, NUL as \00, then leading and trailing spaces and
// carriage returns.
func escapeValue(s string) string {
	const escapees = ",=+<>#;\"\\"
	var chars []rune
	for _, c := range s {
		switch {
		case strings.ContainsRune(escapees, c):
			chars = append(chars, '\\', c)
		case c == 0:
			chars = append(chars, '\\', '0', '0')
		default:
			chars = append(chars, c)
		}
	}
	lead := 0
	for lead < len(chars) && (chars[lead] == ' ' || chars[lead] == '\r') {
		lead++
	}
	trail := len(chars) - 1
	for trail >= 0 && (chars[trail] == ' ' || chars[trail] == '\r') {
		trail--
	}
	var b strings.Builder
	for i, c := range chars {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
