// Package auth holds what authenticates clients and servers: TLS
// configuration built from Apache ZooKeeper's ssl.* settings, the key and
// trust stores those settings name (PEM, PKCS12, JKS), and x509 identities.
package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Sentinel errors of the key and trust stores.
var (
	// ErrStoreType: a store type Zoo cannot read, or a file name whose
	// extension does not tell the type.
	ErrStoreType = errors.New("auth: unknown key store type")
	// ErrStore: a store that cannot be read: wrong password, corrupt
	// file, no key or no certificate where one is needed.
	ErrStore = errors.New("auth: bad key store")
)

// StoreType is a key store format, named as Apache's KeyStoreFileType.
type StoreType string

// Store types Zoo reads. Apache's BCFKS needs Bouncy Castle and is not
// supported.
const (
	PEM    StoreType = "PEM"
	PKCS12 StoreType = "PKCS12"
	JKS    StoreType = "JKS"
)

// StoreTypeOf returns the store type given by an ssl.*.type setting, or,
// when it is empty, by the file's extension, as Apache's
// KeyStoreFileType.fromPropertyValueOrFileName does (.jks, .pem, .p12).
func StoreTypeOf(setting, path string) (StoreType, error) {
	if setting != "" {
		switch t := StoreType(strings.ToUpper(setting)); t {
		case PEM, PKCS12, JKS:
			return t, nil
		}
		return "", fmt.Errorf("%w %q (want PEM, PKCS12 or JKS)", ErrStoreType, setting)
	}
	switch filepath.Ext(path) {
	case ".jks":
		return JKS, nil
	case ".pem":
		return PEM, nil
	case ".p12":
		return PKCS12, nil
	}
	return "", fmt.Errorf("%w: cannot tell the type of %s from its name; set the store's type", ErrStoreType, path)
}

// LoadKeyStore reads the private key and certificate chain a server or
// client presents. Like Apache, it takes the first private key entry, and
// the password unlocks both the store and the key.
func LoadKeyStore(path, password string, typ StoreType) (tls.Certificate, error) {
	data, err := readStore(path)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: %w", ErrStore, err)
	}
	cert, err := parseKeyStore(data, password, typ)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: %s: %w", ErrStore, path, err)
	}
	return cert, nil
}

// LoadTrustStore reads the certificates trusted to sign the peer's
// certificate.
func LoadTrustStore(path, password string, typ StoreType) (*x509.CertPool, error) {
	data, err := readStore(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	certs, err := parseTrustStore(data, password, typ)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStore, path, err)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: %s: no trusted certificate", ErrStore, path)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// maxStoreSize bounds a store file: stores hold a few certificates, and
// a file that is not one (a wrong path to a large file) is refused before
// it is read whole.
const maxStoreSize = 4 << 20

func readStore(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStoreSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStoreSize {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a key store", path, maxStoreSize)
	}
	return data, nil
}

func parseKeyStore(data []byte, password string, typ StoreType) (tls.Certificate, error) {
	switch typ {
	case PEM:
		return parsePEMKeyStore(data)
	case PKCS12:
		key, leaf, chain, err := pkcs12.DecodeChain(data, password)
		if err != nil {
			return tls.Certificate{}, err
		}
		return certificate(key, append([]*x509.Certificate{leaf}, chain...))
	case JKS:
		return parseJKSKeyStore(data, password)
	}
	return tls.Certificate{}, fmt.Errorf("%w %q", ErrStoreType, typ)
}

func parseTrustStore(data []byte, password string, typ StoreType) ([]*x509.Certificate, error) {
	switch typ {
	case PEM:
		certs, _, err := parsePEM(data)
		return certs, err
	case PKCS12:
		return pkcs12.DecodeTrustStore(data, password)
	case JKS:
		ks, err := loadJKS(data, password)
		if err != nil {
			return nil, err
		}
		var certs []*x509.Certificate
		for _, alias := range ks.Aliases() {
			// Java's PKIX trust manager trusts only the trusted
			// certificate entries, not the chains of key entries.
			if !ks.IsTrustedCertificateEntry(alias) {
				continue
			}
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, err
			}
			c, err := x509.ParseCertificate(e.Certificate.Content)
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", alias, err)
			}
			certs = append(certs, c)
		}
		return certs, nil
	}
	return nil, fmt.Errorf("%w %q", ErrStoreType, typ)
}

// parsePEM returns the certificates and the one private key of a PEM file.
// Like Apache's PemReader it reads PKCS#8 keys; it also takes PKCS#1 and
// SEC 1 keys. An encrypted key is refused: Go's standard library cannot
// decrypt PKCS#8.
func parsePEM(data []byte) (certs []*x509.Certificate, key crypto.PrivateKey, err error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, nil, err
			}
			certs = append(certs, c)
		case "ENCRYPTED PRIVATE KEY":
			return nil, nil, errors.New("encrypted PEM private keys are not supported; use an unencrypted key or a PKCS12 or JKS store")
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			if key != nil {
				return nil, nil, errors.New("more than one private key")
			}
			if key, err = parseKey(b); err != nil {
				return nil, nil, err
			}
		}
	}
	return certs, key, nil
}

func parseKey(b *pem.Block) (crypto.PrivateKey, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	}
	return x509.ParsePKCS8PrivateKey(b.Bytes)
}

func parsePEMKeyStore(data []byte) (tls.Certificate, error) {
	certs, key, err := parsePEM(data)
	if err != nil {
		return tls.Certificate{}, err
	}
	return certificate(key, certs)
}

func loadJKS(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New()
	if err := checkJKS(data); err != nil {
		return ks, err
	}
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return ks, fmt.Errorf("JKS (wrong password?): %w", err)
	}
	return ks, nil
}

func parseJKSKeyStore(data []byte, password string) (tls.Certificate, error) {
	ks, err := loadJKS(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(password))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("entry %q: %w", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("entry %q: %w", alias, err)
		}
		var chain []*x509.Certificate
		for _, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("entry %q: %w", alias, err)
			}
			chain = append(chain, cert)
		}
		return certificate(key, chain)
	}
	return tls.Certificate{}, errors.New("no private key entry")
}

// certificate pairs a key with its chain, leaf first, and checks that the
// leaf holds the key's public half.
func certificate(key crypto.PrivateKey, chain []*x509.Certificate) (tls.Certificate, error) {
	if key == nil {
		return tls.Certificate{}, errors.New("no private key")
	}
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate for the private key")
	}
	type publicKeyer interface{ Public() crypto.PublicKey }
	pk, ok := key.(publicKeyer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("unsupported private key type %T", key)
	}
	if !samePublicKey(pk.Public(), chain[0].PublicKey) {
		return tls.Certificate{}, errors.New("the private key does not match the first certificate")
	}
	out := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch a.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return a.(equaler).Equal(b)
	}
	return false
}
