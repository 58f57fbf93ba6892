package auth

import (
	"crypto/x509/pkix"
	"os"
	"os/exec"
	"testing"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

// FuzzStores: store files are read from disk at start-up and on reload
// (possibly half-written); any bytes give a store or an error, never a
// panic or a huge allocation. PKCS12 is left out: go-pkcs12 runs as many
// key-derivation iterations as the file asks for, so random input only
// finds slow inputs in that library.
func FuzzStores(f *testing.F) {
	ca := authtest.NewCA(f, "ca")
	leaf := ca.Issue(f, authtest.Options{Subject: pkix.Name{CommonName: "s"}})
	f.Add(leaf.PEM(f), false)
	f.Add([]byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 'a'}, true)
	if _, err := exec.LookPath("keytool"); err == nil {
		jks, err := os.ReadFile(leaf.JKS(f, f.TempDir(), "k.jks", "secret"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(jks, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, isJKS bool) {
		typ := PEM
		if isJKS {
			typ = JKS
		}
		_, _ = parseKeyStore(data, "secret", typ)
		_, _ = parseTrustStore(data, "secret", typ)
	})
}

// TestJKSCorruptLengths: a JKS store whose declared lengths or counts
// exceed the file is refused before the library allocates them.
func TestJKSCorruptLengths(t *testing.T) {
	for _, b := range [][]byte{
		{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff},
		{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
		{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 3},
		{1, 2, 3},
	} {
		if err := checkJKS(b); err == nil {
			t.Errorf("% x accepted", b)
		}
	}
}
