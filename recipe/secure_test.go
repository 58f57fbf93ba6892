package recipe

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"net"
	"path"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/zk"
)

// startSecureZoo starts an in-process server that serves clients only
// over mutual TLS and requires SASL DIGEST-MD5 (user bob) of every
// session, and returns its address and a client TLS configuration with a
// certificate it trusts.
func startSecureZoo(t *testing.T) (string, *tls.Config) {
	t.Helper()
	ca := authtest.NewCA(t, "ca")
	serverCert := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}}).TLS()
	clientCert := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "recipes"}}).TLS()
	srv, err := zooserver.New(zooserver.Config{
		Logger:             slog.New(slog.DiscardHandler),
		TickTime:           500 * time.Millisecond,
		ExtendedTypes:      true,
		ContainerCheck:     100 * time.Millisecond,
		SASL:               &zooserver.SASLConfig{Users: map[string]string{"bob": "secret"}},
		EnforceAuthSchemes: []string{"sasl"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sec := &zooserver.Secure{
		TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
		X509: true,
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, sec) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	})
	return ln.Addr().String(), &tls.Config{
		RootCAs: ca.Pool(), ServerName: "localhost",
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &clientCert, nil },
	}
}

// TestRecipesOverTLSAndSASL: the recipes need nothing of their own to run
// on a secured server; the client's options carry TLS and SASL, and the
// lock's nodes are owned by the authenticated identities.
func TestRecipesOverTLSAndSASL(t *testing.T) {
	addr, tlsConf := startSecureZoo(t)
	ctx := testCtx(t)
	connect := func(opts ...zk.Option) *zk.Client {
		c, err := zk.Connect(ctx, addr, append([]zk.Option{zk.WithSessionTimeout(4 * time.Second), zk.WithTLS(tlsConf)}, opts...)...)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	// The server really enforces SASL: a session without it is refused.
	anon := connect()
	if _, _, err := anon.Exists(ctx, "/"); !errors.Is(err, zk.ErrSessionClosedRequireSASLAuth) {
		t.Fatalf("a session without SASL: Exists = %v, want ErrSessionClosedRequireSASLAuth", err)
	}

	dir := testRoot(t) + "/lock"
	a, b := connect(zk.WithSASL("bob", "secret")), connect(zk.WithSASL("bob", "secret"))
	held := NewInterProcessMutex(a, dir, zk.CreatorAllACL())
	if err := held.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	acl, _, err := a.GetACL(ctx, held.Node())
	if err != nil {
		t.Fatal(err)
	}
	schemes := map[string]bool{}
	for _, e := range acl {
		schemes[e.Scheme] = true
	}
	if !schemes["sasl"] || !schemes["x509"] {
		t.Errorf("lock node %s ACL %v: want the session's sasl and x509 ids", path.Base(held.Node()), acl)
	}

	other := NewInterProcessMutex(b, dir, zk.CreatorAllACL())
	got := make(chan error, 1)
	go func() { got <- other.Acquire(ctx) }()
	waitParticipants(t, ctx, held, 2)
	select {
	case err := <-got:
		t.Fatalf("second mutex acquired (%v) while the first holds the lock", err)
	default:
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waitCh(t, ctx, got, "second mutex"); err != nil {
		t.Fatalf("second mutex after release: %v", err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
