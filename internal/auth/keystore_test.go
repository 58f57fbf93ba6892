package auth

import (
	"crypto/x509/pkix"
	"errors"
	"testing"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

// TestStoreTypeOf follows Apache's KeyStoreFileType: the setting wins, in
// any case; else the extension; else an error.
func TestStoreTypeOf(t *testing.T) {
	for _, tc := range []struct {
		setting, path string
		want          StoreType
		err           bool
	}{
		{"", "/a/k.jks", JKS, false},
		{"", "/a/k.pem", PEM, false},
		{"", "/a/k.p12", PKCS12, false},
		{"pkcs12", "/a/k.jks", PKCS12, false},
		{"Pem", "/a/k", PEM, false},
		{"", "/a/k.pfx", "", true},
		{"", "/a/k", "", true},
		{"BCFKS", "/a/k.bcfks", "", true},
	} {
		got, err := StoreTypeOf(tc.setting, tc.path)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("StoreTypeOf(%q, %q) = %q, %v", tc.setting, tc.path, got, err)
		}
		if err != nil && !errors.Is(err, ErrStoreType) {
			t.Errorf("%v is not ErrStoreType", err)
		}
	}
}

// TestStores reads the same key and CA from every store type: PEM made
// here, PKCS12 made here, JKS and PKCS12 trust stores made by keytool.
func TestStores(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	leaf := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}})
	other := authtest.NewCA(t, "other")

	check := func(t *testing.T, key string, kt StoreType, trust string, tt StoreType, pw string) {
		t.Helper()
		c, err := LoadKeyStore(key, pw, kt)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Leaf.Equal(leaf.Cert) {
			t.Fatalf("key store %s: wrong certificate %v", kt, c.Leaf.Subject)
		}
		pool, err := LoadTrustStore(trust, pw, tt)
		if err != nil {
			t.Fatal(err)
		}
		if !pool.Equal(ca.Pool()) || pool.Equal(other.Pool()) {
			t.Fatalf("trust store %s does not hold exactly the CA", tt)
		}
		if _, err := LoadKeyStore(key, pw+"x", kt); kt != PEM && !errors.Is(err, ErrStore) {
			t.Fatalf("wrong password: %v, want ErrStore", err)
		}
	}
	t.Run("PEM", func(t *testing.T) {
		check(t, authtest.WriteFile(t, dir, "k.pem", leaf.PEM(t)), PEM, authtest.WriteFile(t, dir, "t.pem", ca.PEM()), PEM, "")
	})
	t.Run("PKCS12", func(t *testing.T) {
		key := authtest.WriteFile(t, dir, "k.p12", leaf.PKCS12(t, "secret"))
		check(t, key, PKCS12, ca.TrustStore(t, dir, "t.p12", "PKCS12", "secret"), PKCS12, "secret")
	})
	t.Run("JKS", func(t *testing.T) {
		check(t, leaf.JKS(t, dir, "k.jks", "secret"), JKS, ca.TrustStore(t, dir, "t.jks", "JKS", "secret"), JKS, "secret")
	})
}

// TestStoreProblems: a key that does not match its certificate, a store
// without a key, and an encrypted PEM key are errors, not a TLS server
// with no certificate.
func TestStoreProblems(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	a := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "a"}})
	b := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "b"}})
	ak, bk := a.PEM(t), b.PEM(t)
	mixed := append(ak[:pemKeyLen(t, ak):pemKeyLen(t, ak)], bk[pemKeyLen(t, bk):]...) // a's key, b's certificate
	for name, data := range map[string][]byte{
		"mismatch":  mixed,
		"nokey":     ca.PEM(),
		"encrypted": []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"),
		"garbage":   []byte("not a store"),
	} {
		if _, err := LoadKeyStore(authtest.WriteFile(t, dir, name+".pem", data), "", PEM); !errors.Is(err, ErrStore) {
			t.Errorf("%s: %v, want ErrStore", name, err)
		}
	}
	if _, err := LoadTrustStore(authtest.WriteFile(t, dir, "empty.pem", nil), "", PEM); !errors.Is(err, ErrStore) {
		t.Errorf("empty trust store: %v, want ErrStore", err)
	}
	if _, err := LoadKeyStore(dir+"/missing.pem", "", PEM); !errors.Is(err, ErrStore) {
		t.Errorf("missing file: %v", err)
	}
}

// pemKeyLen is the length of the key block that starts Cert.PEM's output.
func pemKeyLen(t *testing.T, b []byte) int {
	const end = "-----END PRIVATE KEY-----\n"
	for i := 0; i+len(end) <= len(b); i++ {
		if string(b[i:i+len(end)]) == end {
			return i + len(end)
		}
	}
	t.Fatal("no key block")
	return 0
}
