package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/internal/jute"
)

// tlsEnv is a CA, a server certificate and clients' certificates.
type tlsEnv struct {
	ca      *authtest.CA
	server  tls.Certificate
	client  *authtest.Cert // CN=client,O=Zoo
	admin   *authtest.Cert // CN=admin
	rogue   *authtest.Cert // signed by another CA
	expired *authtest.Cert
}

func newTLSEnv(t testing.TB) *tlsEnv {
	ca := authtest.NewCA(t, "ca")
	return &tlsEnv{
		ca:      ca,
		server:  ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}}).TLS(),
		client:  ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "client", Organization: []string{"Zoo"}}}),
		admin:   ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "admin"}}),
		rogue:   authtest.NewCA(t, "rogue").Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "client", Organization: []string{"Zoo"}}}),
		expired: ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "old"}, NotAfter: time.Now().Add(-time.Hour)}),
	}
}

func (e *tlsEnv) serverConfig(auth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{e.server}, ClientAuth: auth, ClientCAs: e.ca.Pool(), MinVersion: tls.VersionTLS12}
}

// clientConfig trusts the CA and presents cert (none if nil).
func (e *tlsEnv) clientConfig(cert *authtest.Cert) *tls.Config {
	c := &tls.Config{RootCAs: e.ca.Pool(), ServerName: "localhost"}
	if cert != nil {
		// Present it even when the server names other CAs: Go's
		// default choice would then send none.
		tc := cert.TLS()
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tc, nil }
	}
	return c
}

// serveTLS adds a TLS listener to ts and returns its address.
func serveTLS(t testing.TB, ts *testServer, sec *Secure) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ts.srv.ServeTLS(ln, sec) }()
	t.Cleanup(func() {
		// This runs before startServer's cleanup: stop the server here.
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("ServeTLS returned %v", err)
		}
	})
	return ln.Addr().String()
}

// startTLSServer starts a server whose log goes to the returned buffer
// too, with a TLS listener configured by sec.
func startTLSServer(t *testing.T, sec *Secure) (ts *testServer, tlsAddr string, log *syncBuffer) {
	log = &syncBuffer{}
	ts = startServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(log, tWriter{t}), nil))
	})
	return ts, serveTLS(t, ts, sec), log
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitLog waits until the log holds want.
func (s *syncBuffer) waitLog(t *testing.T, want string) {
	t.Helper()
	waitFor(t, ioTimeout, func() error {
		if !strings.Contains(s.String(), want) {
			return errors.New("log lacks " + want)
		}
		return nil
	})
}

// dialTLS opens a TLS session's connection; the handshake is done.
func dialTLS(t testing.TB, addr string, cfg *tls.Config) (*rawClient, error) {
	t.Helper()
	d := &net.Dialer{Timeout: ioTimeout}
	nc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	// In TLS 1.3 a refused client certificate surfaces at the first read.
	return wrapRaw(t, nc), nil
}

// sessionOver opens a session over TLS, or returns the error that stopped
// it: the handshake, or the server closing the connection.
func sessionOver(t *testing.T, addr string, cfg *tls.Config) (*rawClient, error) {
	t.Helper()
	c, err := dialTLS(t, addr, cfg)
	if err != nil {
		return nil, err
	}
	resp, _, err := c.tryHandshake(connectReq(30000))
	if err == nil && resp.SessionID == 0 {
		err = errors.New("no session")
	}
	return c, err
}

// assertClosed fails unless the server has closed c.
func assertClosed(t *testing.T, c *rawClient) {
	t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	if _, err := c.br.ReadByte(); err == nil {
		t.Fatal("the server kept the connection open")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server neither answered nor closed the connection")
	}
}

// TestTLSClientAuth: ssl.clientAuth need, want and none, with and without
// a client certificate, and the x509 id a verified certificate gives.
// Ref: Apache X509Util.ClientAuth; NettyServerCnxnFactory.CertificateVerifier.
func TestTLSClientAuth(t *testing.T) {
	e := newTLSEnv(t)
	for _, tc := range []struct {
		name          string
		auth          tls.ClientAuthType
		withoutCert   bool // a client without a certificate gets a session
		certGivesX509 bool
	}{
		{"need", tls.RequireAndVerifyClientCert, false, true},
		{"want", tls.VerifyClientCertIfGiven, true, true},
		{"none", tls.NoClientCert, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr, _ := startTLSServer(t, &Secure{TLS: e.serverConfig(tc.auth), X509: true})
			c, err := sessionOver(t, addr, e.clientConfig(e.client))
			if err != nil {
				t.Fatalf("client with a certificate: %v", err)
			}
			// A node only the certificate's subject may read.
			acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "x509", ID: "CN=client,O=Zoo"}}}
			c.mustCall(jute.OpCreate, &jute.CreateRequest{Path: "/mine", Data: []byte("x"), ACL: acl}, nil, jute.OK)
			if tc.certGivesX509 {
				if got := c.getData("/mine"); string(got) != "x" {
					t.Fatalf("getData = %q", got)
				}
			} else {
				// The certificate was not asked for: no x509 id.
				c.mustCall(jute.OpGetData, &jute.PathWatch{Path: "/mine"}, nil, jute.NoAuth)
			}
			anon, err := sessionOver(t, addr, e.clientConfig(nil))
			if tc.withoutCert {
				if err != nil {
					t.Fatalf("client without a certificate: %v", err)
				}
				if tc.certGivesX509 {
					anon.mustCall(jute.OpGetData, &jute.PathWatch{Path: "/mine"}, nil, jute.NoAuth)
				}
			} else if err == nil {
				t.Fatal("a client without a certificate got a session with clientAuth=need")
			}
		})
	}
}

// TestTLSRefusedCertificates: an untrusted or expired client certificate
// ends that connection, logged, and other clients go on being served.
func TestTLSRefusedCertificates(t *testing.T) {
	e := newTLSEnv(t)
	_, addr, log := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.RequireAndVerifyClientCert), X509: true})
	good, err := sessionOver(t, addr, e.clientConfig(e.client))
	if err != nil {
		t.Fatal(err)
	}
	for name, cert := range map[string]*authtest.Cert{"untrusted": e.rogue, "expired": e.expired} {
		if _, err := sessionOver(t, addr, e.clientConfig(cert)); err == nil {
			t.Errorf("%s certificate accepted", name)
		}
	}
	log.waitLog(t, "certificate signed by unknown authority")
	log.waitLog(t, "expired")
	good.create("/still-served", nil, 0)
}

// TestTLSWrongProtocol: a plaintext client on the TLS port and a TLS
// client on the plaintext port are each closed with a clear log line.
func TestTLSWrongProtocol(t *testing.T) {
	e := newTLSEnv(t)
	ts, addr, log := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.NoClientCert)})

	plain := dialRaw(t, addr)
	plain.writeFrame(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	assertClosed(t, plain)
	log.waitLog(t, "TLS failed")

	if _, err := sessionOver(t, ts.addr, e.clientConfig(nil)); err == nil {
		t.Fatal("a TLS client got a session on the plaintext port")
	}
	log.waitLog(t, "a TLS client on a plaintext port")
	newSession(t, ts.addr).create("/plain-still-served", nil, 0)
}

// TestTLSHandshakeDeadline: a client that connects and sends nothing is
// closed at ssl.handshakeDetectionTimeoutMillis, one that starts a
// handshake and stalls at HandshakeLimit, while others are served.
func TestTLSHandshakeDeadline(t *testing.T) {
	e := newTLSEnv(t)
	_, addr, log := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.NoClientCert), HandshakeTimeout: 200 * time.Millisecond})
	// The issue's load: 1,000 half-open handshakes at once.
	var silent []*rawClient
	for range 1000 {
		silent = append(silent, dialRaw(t, addr))
	}
	half := dialRaw(t, addr)
	half.writeRaw([]byte{0x16, 0x03, 0x01, 0x00, 0x80}) // a record header, then nothing
	if _, err := sessionOver(t, addr, e.clientConfig(nil)); err != nil {
		t.Fatalf("a client behind stalled handshakes: %v", err)
	}
	start := time.Now()
	for _, c := range silent {
		assertClosed(t, c)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("silent connections closed after %v", d)
	}
	log.waitLog(t, "nothing received within ssl.handshakeDetectionTimeoutMillis")
	_ = half.nc.SetReadDeadline(time.Now().Add(HandshakeLimit + ioTimeout))
	if _, err := half.br.ReadByte(); err == nil {
		t.Fatal("a stalled handshake got an answer")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a stalled handshake was never closed")
	}
	if d := time.Since(start); d < HandshakeLimit/2 {
		t.Errorf("a stalled handshake closed after %v, before the handshake limit", d)
	}
}

// TestTLSPortUnification: one port takes TLS and plaintext clients
// (client.portUnification), and four-letter words in plaintext.
func TestTLSPortUnification(t *testing.T) {
	e := newTLSEnv(t)
	_, addr, _ := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.VerifyClientCertIfGiven), Unified: true, X509: true})
	secure, err := sessionOver(t, addr, e.clientConfig(e.client))
	if err != nil {
		t.Fatal(err)
	}
	secure.create("/from-tls", nil, 0)
	plain := newSession(t, addr)
	if _, ok := plain.exists("/from-tls"); !ok {
		t.Fatal("plaintext client does not see the TLS client's node")
	}
	ruok := dialRaw(t, addr)
	ruok.writeRaw([]byte("ruok"))
	b, _ := io.ReadAll(ruok.br)
	if string(b) != "imok" {
		t.Fatalf("ruok on the unified port: %q", b)
	}
}

// TestTLSX509SuperUser: the subject named by
// X509AuthenticationProvider.superUser gets the super id.
func TestTLSX509SuperUser(t *testing.T) {
	e := newTLSEnv(t)
	_, addr, _ := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.RequireAndVerifyClientCert), X509: true, X509SuperUser: "CN=admin"})
	c, err := sessionOver(t, addr, e.clientConfig(e.client))
	if err != nil {
		t.Fatal(err)
	}
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "x509", ID: "CN=client,O=Zoo"}}}
	c.mustCall(jute.OpCreate, &jute.CreateRequest{Path: "/private", Data: []byte("p"), ACL: acl}, nil, jute.OK)
	admin, err := sessionOver(t, addr, e.clientConfig(e.admin))
	if err != nil {
		t.Fatal(err)
	}
	if got := admin.getData("/private"); string(got) != "p" {
		t.Fatalf("super user read %q", got)
	}
	other, err := sessionOver(t, addr, e.clientConfig(e.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "other"}})))
	if err != nil {
		t.Fatal(err)
	}
	other.mustCall(jute.OpGetData, &jute.PathWatch{Path: "/private"}, nil, jute.NoAuth)
}

// TestTLSNoX509Provider: as in Apache, a client certificate with no x509
// provider configured closes the connection.
func TestTLSNoX509Provider(t *testing.T) {
	e := newTLSEnv(t)
	_, addr, log := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.VerifyClientCertIfGiven)})
	if _, err := sessionOver(t, addr, e.clientConfig(e.client)); err == nil {
		t.Fatal("a certificate was accepted without an x509 provider")
	}
	log.waitLog(t, "no x509 auth provider")
	if _, err := sessionOver(t, addr, e.clientConfig(nil)); err != nil {
		t.Fatalf("a client without a certificate: %v", err)
	}
}

// TestTLSCertReload: replacing the key store on disk changes the
// certificate new clients see, and a client connected before keeps its
// session and connection.
func TestTLSCertReload(t *testing.T) {
	e := newTLSEnv(t)
	dir := t.TempDir()
	first := e.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server-1"}})
	keyPath := authtest.WriteFile(t, dir, "server.pem", first.PEM(t))
	trust := authtest.WriteFile(t, dir, "ca.pem", e.ca.PEM())
	st, err := auth.NewServerTLS(auth.TLS{
		KeyStore: auth.Store{Path: keyPath, Type: auth.PEM}, TrustStore: auth.Store{Path: trust, Type: auth.PEM},
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	st.Watch(20 * time.Millisecond)
	_, addr, _ := startTLSServer(t, &Secure{TLS: st.Config(), X509: true})

	var mu sync.Mutex
	var seen string
	cfg := e.clientConfig(e.client)
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		mu.Lock()
		defer mu.Unlock()
		seen = cs.PeerCertificates[0].Subject.CommonName
		return nil
	}
	old, err := sessionOver(t, addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, e.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server-2"}}).PEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ioTimeout, func() error {
		if _, err := sessionOver(t, addr, cfg); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if seen != "server-2" {
			return errors.New("still " + seen)
		}
		return nil
	})
	old.create("/after-reload", nil, 0)
}
