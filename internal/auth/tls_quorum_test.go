package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

// unifiedQuorumListener makes p's quorum TLS and a unified listener on a
// free port; the test's end closes both.
func unifiedQuorumListener(t *testing.T, p *pki) (*QuorumTLS, net.Listener) {
	t.Helper()
	tl, err := ParseTLS(settings(map[string]string{"ssl.quorum.keyStore.location": p.key, "ssl.quorum.trustStore.location": p.trust}), "ssl.quorum.")
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewQuorumTLS(tl, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := q.UnifiedListener(raw)
	t.Cleanup(func() { ln.Close() })
	return q, ln
}

// TestQuorumUnifiedListener: with portUnification one quorum port serves
// plaintext peers and TLS peers, and still refuses a TLS peer whose
// certificate it does not trust.
func TestQuorumUnifiedListener(t *testing.T) {
	p := newPKI(t)
	q, ln := unifiedQuorumListener(t, p)
	done := make(chan struct{})
	defer func() { ln.Close(); <-done }()
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // echo 4 bytes
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, 4)
				if _, err := io.ReadFull(c, b); err == nil {
					_, _ = c.Write(b)
				}
			}()
		}
	}()
	echo := func(c net.Conn) error {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ZOOP")); err != nil {
			return err
		}
		b := make([]byte, 4)
		_, err := io.ReadFull(c, b)
		return err
	}
	plain, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := echo(plain); err != nil {
		t.Fatalf("plaintext peer: %v", err)
	}
	secure, err := q.Dial(context.Background(), ln.Addr().String())
	if err != nil {
		t.Fatalf("TLS peer: %v", err)
	}
	if _, ok := secure.(*tls.Conn); !ok {
		t.Fatalf("dialled %T, want TLS", secure)
	}
	if err := echo(secure); err != nil {
		t.Fatalf("TLS peer: %v", err)
	}
	rogue := authtest.NewCA(t, "rogue").Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "rogue"}}).TLS()
	bad, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: p.ca.Pool(), ServerName: "127.0.0.1",
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &rogue, nil }})
	if err == nil {
		err = echo(bad)
	}
	if err == nil {
		t.Fatal("an untrusted TLS peer was served")
	}
}

// TestQuorumTLSReload: after the key store changes, both sides of new
// quorum connections use the new certificate; a store that does not load
// keeps the previous one on both sides.
func TestQuorumTLSReload(t *testing.T) {
	p := newPKI(t)
	q, ln := unifiedQuorumListener(t, p)
	// seen gets the certificate each accepted TLS connection presented.
	seen := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Read(make([]byte, 1)); err == nil {
					tc := c.(*UnifiedConn).TLS()
					seen <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
				}
			}()
		}
	}()
	// dial returns the CN the listener presented and the one it saw.
	dial := func() (string, string) {
		t.Helper()
		c, err := q.Dial(context.Background(), ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		return c.(*tls.Conn).ConnectionState().PeerCertificates[0].Subject.CommonName, <-seen
	}
	if a, b := dial(); a != "server" || b != "server" {
		t.Fatalf("before: %s, %s", a, b)
	}
	next := p.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "rotated"}})
	authtest.WriteFile(t, p.dir, "server.pem", next.PEM(t))
	if err := q.Reload(); err != nil {
		t.Fatal(err)
	}
	if a, b := dial(); a != "rotated" || b != "rotated" {
		t.Fatalf("after the reload: listener %s, dialler %s", a, b)
	}
	authtest.WriteFile(t, p.dir, "server.pem", []byte("half-written"))
	if err := q.Reload(); err == nil {
		t.Fatal("a broken key store reloaded")
	}
	if a, b := dial(); a != "rotated" || b != "rotated" {
		t.Fatalf("after a failed reload: listener %s, dialler %s", a, b)
	}
}
