package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

// crlServer serves a CA's CRL over HTTP, counting fetches; fail makes it
// answer 503.
type crlServer struct {
	*httptest.Server
	mu      sync.Mutex
	der     []byte
	fail    atomic.Bool
	fetches atomic.Int64
}

func newCRLServer(t *testing.T, der []byte) *crlServer {
	s := &crlServer{der: der}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.fetches.Add(1)
		if s.fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		_, _ = w.Write(s.der)
	}))
	t.Cleanup(s.Close)
	return s
}

// serverWith returns the TLS server configuration of p with settings
// (ssl.crl, ssl.ocsp...) added, requiring client certificates.
func serverWith(t *testing.T, p *pki, extra map[string]string) *tls.Config {
	t.Helper()
	m := map[string]string{"ssl.keyStore.location": p.key, "ssl.trustStore.location": p.trust}
	for k, v := range extra {
		m[k] = v
	}
	tl, err := ParseTLS(settings(m), "ssl.")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tl.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientWith(p *pki, c *authtest.Cert) *tls.Config {
	return &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{c.TLS()}}
}

// TestRevocationCRL: with ssl.crl=true a client certificate listed in the
// CRL of its distribution point is refused, one not listed is accepted,
// and one whose status cannot be found out (no distribution point, the
// CRL server down, a CRL signed by someone else) is refused, as Java's
// PKIX checker refuses it. Ref: Apache X509Util.createTrustManager
// (setRevocationEnabled, com.sun.security.enableCRLDP).
func TestRevocationCRL(t *testing.T) {
	p := newPKI(t)
	srv := newCRLServer(t, nil)
	dp := authtest.Options{CRLURLs: []string{srv.URL + "/ca.crl"}}
	good := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "good"}, CRLURLs: dp.CRLURLs})
	bad := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "bad"}, CRLURLs: dp.CRLURLs})
	nodp := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "nodp"}})
	srv.der = p.ca.CRL(t, bad)

	server := serverWith(t, p, map[string]string{"ssl.crl": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, good)); err != nil {
		t.Fatalf("a certificate not in the CRL: %v", err)
	}
	if _, err := handshakeTCP(t, server, clientWith(p, bad)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("a revoked certificate: %v, want ErrRevoked", err)
	}
	if _, err := handshakeTCP(t, server, clientWith(p, nodp)); !errors.Is(err, ErrRevocationUnknown) {
		t.Fatalf("a certificate without a distribution point: %v, want ErrRevocationUnknown", err)
	}
	// Without ssl.crl nothing is checked, as in Apache.
	if _, err := handshakeTCP(t, serverWith(t, p, nil), clientWith(p, bad)); err != nil {
		t.Fatalf("ssl.crl unset: %v", err)
	}

	// A CRL server that is down: the fresh checker cannot know.
	srv.fail.Store(true)
	server = serverWith(t, p, map[string]string{"ssl.crl": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, good)); !errors.Is(err, ErrRevocationUnknown) {
		t.Fatalf("CRL server down: %v, want ErrRevocationUnknown", err)
	}
	srv.fail.Store(false)

	// A CRL signed by another CA is not the issuer's.
	srv.mu.Lock()
	srv.der = authtest.NewCA(t, "other").CRL(t)
	srv.mu.Unlock()
	server = serverWith(t, p, map[string]string{"ssl.crl": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, good)); !errors.Is(err, ErrRevocationUnknown) {
		t.Fatalf("CRL of another CA: %v, want ErrRevocationUnknown", err)
	}
}

// TestRevocationCRLFile: a file:// distribution point, in PEM or DER.
func TestRevocationCRLFile(t *testing.T) {
	p := newPKI(t)
	u := (&url.URL{Scheme: "file", Path: p.dir + "/ca.crl"}).String()
	good := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "good"}, CRLURLs: []string{u}})
	bad := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "bad"}, CRLURLs: []string{u}})
	authtest.WriteFile(t, p.dir, "ca.crl", p.ca.CRL(t, bad))
	server := serverWith(t, p, map[string]string{"ssl.crl": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, good)); err != nil {
		t.Fatal(err)
	}
	if _, err := handshakeTCP(t, server, clientWith(p, bad)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked: %v", err)
	}
}

// TestRevocationCRLCached: a burst of handshakes fetches the CRL once.
func TestRevocationCRLCached(t *testing.T) {
	p := newPKI(t)
	srv := newCRLServer(t, nil)
	good := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "good"}, CRLURLs: []string{srv.URL}})
	srv.der = p.ca.CRL(t)
	server := serverWith(t, p, map[string]string{"ssl.crl": "true"})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := handshakeTCP(t, server, clientWith(p, good))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the CRL for 20 handshakes, want 1", n)
	}
}

// TestRevocationOCSP: with ssl.ocsp=true the certificate's OCSP responder
// decides; when it cannot answer, the CRL does (Java's PREFER_OCSP with
// fallback).
func TestRevocationOCSP(t *testing.T) {
	p := newPKI(t)
	crl := newCRLServer(t, nil)
	var down atomic.Bool
	var resp *authtest.OCSPResponder
	ocspSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		resp.ServeHTTP(w, r)
	}))
	defer ocspSrv.Close()
	o := func(cn string) *authtest.Cert {
		return p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: cn},
			OCSPURLs: []string{ocspSrv.URL}, CRLURLs: []string{crl.URL}})
	}
	good, bad, crlOnly := o("good"), o("bad"), o("crl-only")
	resp = p.ca.NewOCSPResponder(bad)
	crl.der = p.ca.CRL(t, crlOnly)

	server := serverWith(t, p, map[string]string{"ssl.ocsp": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, good)); err != nil {
		t.Fatalf("good: %v", err)
	}
	if _, err := handshakeTCP(t, server, clientWith(p, bad)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked by OCSP: %v", err)
	}
	if crl.fetches.Load() != 0 || resp.Requests.Load() != 2 {
		t.Fatalf("%d CRL fetches, %d OCSP requests: OCSP should have decided alone", crl.fetches.Load(), resp.Requests.Load())
	}
	// The responder is down: the CRL decides.
	down.Store(true)
	server = serverWith(t, p, map[string]string{"ssl.ocsp": "true"})
	if _, err := handshakeTCP(t, server, clientWith(p, crlOnly)); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked in the CRL, OCSP down: %v", err)
	}
	if _, err := handshakeTCP(t, server, clientWith(p, good)); err != nil {
		t.Fatalf("good, OCSP down, CRL up: %v", err)
	}
}

// TestRevocationQuorum: both ends of a quorum link check the other's
// certificate with ssl.quorum.crl, and -Dcom.sun.net.ssl.checkRevocation
// turns checking on as ssl.crl does.
func TestRevocationQuorum(t *testing.T) {
	p := newPKI(t)
	srv := newCRLServer(t, nil)
	dp := []string{srv.URL}
	a := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "a"}, CRLURLs: dp})
	b := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "b"}, CRLURLs: dp})
	srv.der = p.ca.CRL(t, b)
	store := func(c *authtest.Cert) string {
		return authtest.WriteFile(t, p.dir, c.Cert.Subject.CommonName+".pem", c.PEM(t))
	}
	for _, key := range []string{"ssl.quorum.crl", PropCheckRevocation} {
		cfg := func(c *authtest.Cert) TLS {
			tl, err := ParseTLS(settings(map[string]string{
				"ssl.quorum.keyStore.location": store(c), "ssl.quorum.trustStore.location": p.trust, key: "true",
			}), "ssl.quorum.")
			if err != nil {
				t.Fatal(err)
			}
			if tl.Revocation == nil {
				t.Fatalf("%s=true: no revocation checking", key)
			}
			return tl
		}
		ta, tb := cfg(a), cfg(b)
		sa, err := ta.ServerConfig()
		if err != nil {
			t.Fatal(err)
		}
		ca, err := ta.ClientConfig("localhost")
		if err != nil {
			t.Fatal(err)
		}
		cb, err := tb.ClientConfig("localhost")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := handshakeTCP(t, sa, ca); err != nil {
			t.Fatalf("%s: a to a: %v", key, err)
		}
		if _, err := handshakeTCP(t, sa, cb); !errors.Is(err, ErrRevoked) {
			t.Fatalf("%s: revoked b dialling a: %v", key, err)
		}
		sb, err := tb.ServerConfig()
		if err != nil {
			t.Fatal(err)
		}
		// a dials revoked b: a's client side refuses b's certificate.
		_, err = handshakeTCP(t, sb, ca)
		if err == nil {
			t.Fatalf("%s: a accepted revoked b's certificate", key)
		}
	}
}

// TestRevocationStale: a CRL past its nextUpdate is not used.
func TestRevocationStale(t *testing.T) {
	p := newPKI(t)
	srv := newCRLServer(t, nil)
	good := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "good"}, CRLURLs: []string{srv.URL}})
	srv.der = p.ca.CRL(t)
	r := NewRevocation(false)
	r.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	err := r.Check([][]*x509.Certificate{{good.Cert, p.ca.Cert}})
	if !errors.Is(err, ErrRevocationUnknown) {
		t.Fatalf("stale CRL: %v", err)
	}
}

// handshakeTCP is handshake over loopback TCP: the server's alert after
// a TLS 1.3 client finished does not block on a reader as on net.Pipe.
// It returns the server's error first.
func handshakeTCP(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			errc <- err
			return
		}
		defer nc.Close()
		errc <- tls.Client(nc, client).HandshakeContext(ctx)
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sc := tls.Server(nc, server)
	err = sc.HandshakeContext(ctx)
	cerr := <-errc
	if err == nil {
		err = cerr
	}
	return sc.ConnectionState(), err
}

// FuzzRevocationCRL: whatever a distribution point serves, reading it
// does not panic, and a CRL is used only if its issuer signed it.
func FuzzRevocationCRL(f *testing.F) {
	ca := authtest.NewCA(f, "ca")
	cert := ca.Issue(f, authtest.Options{Subject: pkix.Name{CommonName: "c"}})
	f.Add(ca.CRL(f))
	f.Add(ca.CRL(f, cert))
	f.Add(authtest.NewCA(f, "other").CRL(f))
	f.Add([]byte("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n"))
	f.Add([]byte{0x30, 0x82, 0xff, 0xff})
	now := time.Now()
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := parseCRL(data)
		if err != nil {
			return
		}
		if checkCRL(list, ca.Cert, now) != nil {
			return
		}
		if list.CheckSignatureFrom(ca.Cert) != nil {
			t.Fatal("a CRL the issuer did not sign was accepted")
		}
	})
}
