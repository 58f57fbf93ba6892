package zk

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/authtest"
	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest"
)

// tlsFixture is a CA with server and client certificates, the server's
// stores as PEM files, and the ssl.* settings that name them.
type tlsFixture struct {
	ca     *authtest.CA
	client *authtest.Cert
	cfg    string // zoo.cfg lines
	keys   map[string]string
}

func newTLSFixture(t *testing.T) *tlsFixture {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	srv := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}})
	f := &tlsFixture{ca: ca, client: ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "client", Organization: []string{"Zoo"}}})}
	f.keys = map[string]string{
		"ssl.keyStore.location":   authtest.WriteFile(t, dir, "server.pem", srv.PEM(t)),
		"ssl.trustStore.location": authtest.WriteFile(t, dir, "ca.pem", ca.PEM()),
		"ssl.clientAuth":          "need",
	}
	for k, v := range f.keys {
		f.cfg += k + "=" + v + "\n"
	}
	return f
}

// startTLSZoo serves TLS the way cmd/zoo does for secureClientPort.
func startTLSZoo(t *testing.T, f *tlsFixture) string {
	settings, err := auth.ParseTLS(func(k string) (string, bool) { v, ok := f.keys[k]; return v, ok }, "ssl.")
	if err != nil {
		t.Fatal(err)
	}
	st, err := auth.NewServerTLS(settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := zooserver.New(zooserver.Config{Logger: slog.New(slog.DiscardHandler), TickTime: 500 * time.Millisecond, Version: "3.9.2-zoo"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, &zooserver.Secure{TLS: st.Config(), X509: true}) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		<-served
	})
	return ln.Addr().String()
}

func startTLSApache(t *testing.T, f *tlsFixture) string {
	dir := t.TempDir()
	srv, err := zktest.Apache{TickTimeMs: 500, TLS: f.cfg}.Start(dir)
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.SecureAddr
}

// TestTLS: the client over TLS with a client certificate gets a session
// whose x509 id is its subject; without a certificate (ssl.clientAuth
// need) or without TLS it gets none. Apache 3.8 (secureClientPort with
// Netty) is the oracle.
func TestTLS(t *testing.T) {
	for _, tg := range []struct {
		name  string
		start func(*testing.T, *tlsFixture) string
	}{{"zoo", startTLSZoo}, {"apache", startTLSApache}} {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			f := newTLSFixture(t)
			addr := tg.start(t, f)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			withCert := &tls.Config{RootCAs: f.ca.Pool(), Certificates: []tls.Certificate{f.client.TLS()}, ServerName: "localhost"}
			c, err := Connect(ctx, addr, WithTLS(withCert))
			if err != nil {
				t.Fatalf("connect with a certificate: %v", err)
			}
			defer c.Close()
			path := "/tls-" + tg.name
			acl := []ACL{{Perms: PermAll, Scheme: "x509", ID: "CN=client,O=Zoo"}}
			if _, _, err := c.Create(ctx, path, []byte("secret"), 0, acl); err != nil {
				t.Fatalf("create with an x509 ACL: %v", err)
			}
			if data, _, err := c.Get(ctx, path); err != nil || string(data) != "secret" {
				t.Fatalf("get as the certificate's subject: %q, %v", data, err)
			}

			short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
			defer cancelShort()
			noCert := &tls.Config{RootCAs: f.ca.Pool(), ServerName: "localhost"}
			if c2, err := Connect(short, addr, WithTLS(noCert)); err == nil {
				c2.Close()
				t.Fatal("a client without a certificate got a session (clientAuth=need)")
			}
			short2, cancelShort2 := context.WithTimeout(ctx, 3*time.Second)
			defer cancelShort2()
			if c3, err := Connect(short2, addr); err == nil {
				c3.Close()
				t.Fatal("a plaintext client got a session on the TLS port")
			}
		})
	}
}

// TestTLSUntrustedServer: the client refuses a server whose certificate
// its roots do not vouch for.
func TestTLSUntrustedServer(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSZoo(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	other := authtest.NewCA(t, "other")
	_, err := Connect(ctx, addr, WithTLS(&tls.Config{RootCAs: other.Pool(), Certificates: []tls.Certificate{f.client.TLS()}}))
	if err == nil {
		t.Fatal("connected to an untrusted server")
	}
}
