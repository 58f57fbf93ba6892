package server

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/zk"
)

// quorumTLS builds the quorum TLS of a member from PEM stores, as cmd/zoo
// does from ssl.quorum.* settings.
func quorumTLS(t *testing.T, ca *authtest.CA, cn string) *auth.QuorumTLS {
	dir := t.TempDir()
	cert := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: cn}})
	settings := map[string]string{
		"ssl.quorum.keyStore.location":   authtest.WriteFile(t, dir, "key.pem", cert.PEM(t)),
		"ssl.quorum.trustStore.location": authtest.WriteFile(t, dir, "ca.pem", ca.PEM()),
	}
	tl, err := auth.ParseTLS(func(k string) (string, bool) { v, ok := settings[k]; return v, ok }, "ssl.quorum.")
	if err != nil {
		t.Fatal(err)
	}
	q, err := auth.NewQuorumTLS(tl, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestQuorumTLS: an ensemble whose quorum links are mutual TLS
// (sslQuorum=true) elects a leader and replicates; a peer whose
// certificate the members' trust store does not vouch for is refused.
func TestQuorumTLS(t *testing.T) {
	ca := authtest.NewCA(t, "quorum-ca")
	ms := startMembers(t, 3, 0, "", func(c *Config) {
		q := quorumTLS(t, ca, "server")
		c.Ensemble.Listener = tls.NewListener(c.Ensemble.Listener, q.Listen)
		c.Ensemble.Dial = q.Dial
	})
	leader := leaderOf(t, ms)
	c := newSession(t, ms[leader].addr)
	c.create("/over-quorum-tls", []byte("v"), 0)
	for id, m := range ms {
		if id == leader {
			continue
		}
		// A member that started late may still be joining (it drops
		// clients until it has the leader's state): retried.
		waitFor(t, 20*time.Second, func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			f, err := zk.Connect(ctx, m.addr)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := f.Sync(ctx, "/over-quorum-tls"); err != nil {
				return err
			}
			if got, _, err := f.Get(ctx, "/over-quorum-tls"); err != nil || string(got) != "v" {
				return fmt.Errorf("member %d: %q, %v", id, got, err)
			}
			return nil
		})
	}

	// It trusts the members and presents a certificate they do not
	// trust.
	intruder := authtest.NewCA(t, "rogue-ca").Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "intruder"}}).TLS()
	addr := ms[leader].srv.peers.Addr().String()
	nc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1",
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &intruder, nil }})
	if err == nil {
		// TLS 1.3: the server's refusal of our certificate arrives at the
		// first read.
		_, err = nc.Read(make([]byte, 1))
		nc.Close()
	}
	if err == nil {
		t.Fatal("a peer with an untrusted certificate was accepted")
	}
	ms[leader].srv.log.Info("test: the intruder was refused") // marks the log
	c.create("/still-replicating", nil, 0)
}
