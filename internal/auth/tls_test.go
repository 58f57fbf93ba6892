package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

func settings(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestParseTLS reads Apache's ssl.* settings with Apache's defaults.
// Ref: X509Util, SSLContextAndOptions.
func TestParseTLS(t *testing.T) {
	dir := t.TempDir()
	pw := authtest.WriteFile(t, dir, "pw", []byte("from-file\n"))
	tl, err := ParseTLS(settings(map[string]string{
		"ssl.keyStore.location": "/k.p12", "ssl.keyStore.password": "ignored", "ssl.keyStore.passwordPath": pw,
		"ssl.trustStore.location": "/t", "ssl.trustStore.type": "jks",
	}), "ssl.")
	if err != nil {
		t.Fatal(err)
	}
	if tl.KeyStore != (Store{"/k.p12", "from-file", PKCS12}) || tl.TrustStore != (Store{"/t", "", JKS}) {
		t.Errorf("stores %+v %+v", tl.KeyStore, tl.TrustStore)
	}
	if tl.ClientAuth != tls.RequireAndVerifyClientCert || !tl.HostnameVerification ||
		tl.HandshakeTimeout != 5*time.Second || tl.MinVersion != tls.VersionTLS12 || tl.MaxVersion != tls.VersionTLS13 {
		t.Errorf("defaults %+v", tl)
	}

	for _, tc := range []struct {
		m    map[string]string
		want func(TLS) bool
	}{
		{map[string]string{"ssl.clientAuth": "want"}, func(t TLS) bool { return t.ClientAuth == tls.VerifyClientCertIfGiven }},
		{map[string]string{"ssl.clientAuth": "NONE"}, func(t TLS) bool { return t.ClientAuth == tls.NoClientCert }},
		{map[string]string{"ssl.protocol": "TLSv1.2"}, func(t TLS) bool { return t.MinVersion == tls.VersionTLS12 && t.MaxVersion == tls.VersionTLS12 }},
		{map[string]string{"ssl.enabledProtocols": "TLSv1.3"}, func(t TLS) bool { return t.MinVersion == tls.VersionTLS13 }},
		{map[string]string{"ssl.ciphersuites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"},
			func(t TLS) bool {
				return slices.Equal(t.CipherSuites, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}) && t.MinVersion == tls.VersionTLS12
			}},
		{map[string]string{"ssl.ciphersuites": "TLS_AES_256_GCM_SHA384"}, func(t TLS) bool { return t.MinVersion == tls.VersionTLS13 }},
		{map[string]string{"ssl.hostnameVerification": "false"}, func(t TLS) bool { return !t.HostnameVerification }},
		{map[string]string{"ssl.handshakeDetectionTimeoutMillis": "250"}, func(t TLS) bool { return t.HandshakeTimeout == 250*time.Millisecond }},
		{map[string]string{"ssl.handshakeDetectionTimeoutMillis": "0"}, func(t TLS) bool { return t.HandshakeTimeout == DefaultHandshakeTimeout }},
		{map[string]string{"ssl.quorum.clientAuth": "none"}, func(t TLS) bool { return t.ClientAuth == tls.RequireAndVerifyClientCert }},
	} {
		got, err := ParseTLS(settings(tc.m), "ssl.")
		if err != nil || !tc.want(got) {
			t.Errorf("%v: %+v, %v", tc.m, got, err)
		}
	}
}

// TestParseTLSErrors: every bad value is an error naming its key.
func TestParseTLSErrors(t *testing.T) {
	for key, value := range map[string]string{
		"ssl.clientAuth":                      "maybe",
		"ssl.protocol":                        "SSLv3",
		"ssl.enabledProtocols":                "TLSv1.1,TLSv1.3",
		"ssl.ciphersuites":                    "TLS_ECDHE_RSA_WITH_NOT_A_CIPHER",
		"ssl.hostnameVerification":            "yes",
		"ssl.handshakeDetectionTimeoutMillis": "5s",
		"ssl.keyStore.location":               "/k.pfx",
		"ssl.trustStore.type":                 "BCFKS",
		"ssl.keyStore.passwordPath":           "/no/such/file",
	} {
		m := map[string]string{key: value, "ssl.keyStore.location": "/k.p12", "ssl.trustStore.location": "/t.jks"}
		m[key] = value
		_, err := ParseTLS(settings(m), "ssl.")
		var se *SettingError
		if !errors.As(err, &se) || se.Key != key {
			t.Errorf("%s=%s: %v, want a SettingError for %s", key, value, err, key)
		}
	}
}

// pki is a CA, a server certificate and the server's settings in PEM.
type pki struct {
	ca     *authtest.CA
	dir    string
	key    string
	trust  string
	server *authtest.Cert
}

func newPKI(t *testing.T) *pki {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	srv := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}})
	return &pki{ca: ca, dir: dir, server: srv,
		key:   authtest.WriteFile(t, dir, "server.pem", srv.PEM(t)),
		trust: authtest.WriteFile(t, dir, "ca.pem", ca.PEM())}
}

// handshake runs a TLS handshake between server and client configs and
// returns the server's view of the client certificate.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- tls.Client(b, client).HandshakeContext(ctx)
	}()
	sc := tls.Server(a, server)
	err := sc.HandshakeContext(ctx)
	if err != nil {
		a.Close()
	}
	cerr := <-errc
	if err == nil {
		err = cerr
	}
	return sc.ConnectionState(), err
}

// TestServerTLSReload: new handshakes use the new certificate once the key
// store file changes; a broken file keeps the old one.
func TestServerTLSReload(t *testing.T) {
	p := newPKI(t)
	s, err := NewServerTLS(TLS{KeyStore: Store{Path: p.key, Type: PEM}, TrustStore: Store{Path: p.trust, Type: PEM},
		ClientAuth: tls.NoClientCert, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Watch(10 * time.Millisecond)
	var served *tls.Certificate
	client := &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost",
		VerifyConnection: func(cs tls.ConnectionState) error {
			c := tls.Certificate{Certificate: [][]byte{cs.PeerCertificates[0].Raw}}
			served = &c
			return nil
		}}
	if _, err := handshake(t, s.Config(), client); err != nil {
		t.Fatal(err)
	}
	first := served.Certificate[0]

	next := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server-2"}})
	if err := os.WriteFile(p.key, next.PEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := handshake(t, s.Config(), client); err != nil {
			t.Fatal(err)
		}
		if string(served.Certificate[0]) == string(next.Cert.Raw) {
			break
		}
		if string(served.Certificate[0]) != string(first) || time.Now().After(deadline) {
			t.Fatal("the new certificate was not picked up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(p.key, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil {
		t.Fatal("reloading a broken store succeeded")
	}
	if _, err := handshake(t, s.Config(), client); err != nil || string(served.Certificate[0]) != string(next.Cert.Raw) {
		t.Fatalf("after a failed reload: %v", err)
	}
}

// TestClientConfigHostnameVerification: with verification off a client
// still refuses a server its trust store does not vouch for.
func TestClientConfigHostnameVerification(t *testing.T) {
	p := newPKI(t)
	server, err := TLS{KeyStore: Store{Path: p.key, Type: PEM}, ClientAuth: tls.NoClientCert}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	trust := Store{Path: p.trust, Type: PEM}
	for _, tc := range []struct {
		verify bool
		name   string
		ok     bool
	}{
		{true, "localhost", true},
		{true, "elsewhere.example", false},
		{false, "elsewhere.example", true},
	} {
		c, err := TLS{TrustStore: trust, HostnameVerification: tc.verify}.ClientConfig(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := handshake(t, server, c); (err == nil) != tc.ok {
			t.Errorf("verify=%v name=%s: %v", tc.verify, tc.name, err)
		}
	}
	other := authtest.WriteFile(t, p.dir, "other.pem", authtest.NewCA(t, "other").PEM())
	c, err := TLS{TrustStore: Store{Path: other, Type: PEM}}.ClientConfig("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, server, c); err == nil {
		t.Error("an untrusted server was accepted with hostname verification off")
	}
}
