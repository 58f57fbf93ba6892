package acl

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zoohq/zoo/internal/jute"
)

// Digest returns the digest id of "user:password" as Apache's
// DigestAuthenticationProvider.generateDigest computes it: the user part
// (up to the first colon), a colon, and the base64 SHA-1 of the whole
// string. A password may itself contain colons: "bob:pa:ss" hashes
// "bob:pa:ss" under user "bob". Without a colon the whole string is the
// user ("alice" gives "alice:" + base64(sha1("alice"))), as in Apache.
//
// This is the value to put in a digest ACL and the id an auth packet of
// scheme digest gives the session.
func Digest(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// Authenticate turns an auth packet (addauth scheme auth) into the ids to
// add to the session, as Apache's auth providers do. superDigest is the
// configured super user digest ("super:<hash>", Apache's
// zookeeper.DigestAuthenticationProvider.superDigest); empty disables it.
//
//   - digest: auth is "user:password" (UTF-8; invalid bytes become U+FFFD
//     as Java's new String(bytes) makes them). The id is
//     digest:Digest(auth); if that equals superDigest the session also gets
//     super:"" (listed first). Apache accepts any bytes here, even without a
//     colon, and so does Zoo.
//   - ip: accepted, but adds nothing: the connection already has its ip id
//     (IPID) and Apache's provider would only add that same id again.
//   - anything else (world, auth, super, x509, sasl, unknown): fails. x509
//     identities come from the TLS handshake, not from auth packets.
//
// Failures wrap jute.AuthFailed. Apache then closes the connection; that is
// the server's business.
func Authenticate(scheme string, auth []byte, superDigest string) ([]jute.Id, error) {
	switch scheme {
	case SchemeDigest:
		d := Digest(javaString(auth))
		id := jute.Id{Scheme: SchemeDigest, ID: d}
		if superDigest != "" && d == superDigest {
			return []jute.Id{{Scheme: SchemeSuper, ID: ""}, id}, nil
		}
		return []jute.Id{id}, nil
	case SchemeIP:
		return nil, nil
	}
	return nil, fmt.Errorf("acl: no auth provider for scheme %q: %w", scheme, jute.AuthFailed)
}

// javaString decodes b as UTF-8, replacing each byte that does not start a
// valid sequence with U+FFFD. Java replaces a truncated multi-byte sequence
// with a single U+FFFD where Go's decoding gives one per byte; passwords
// with invalid UTF-8 are not worth more than that.
func javaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}
