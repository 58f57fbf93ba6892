package server

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/zk"
)

// TestQuorumTLSReloadCertFiles: sslQuorumReloadCertFiles. The members'
// quorum CA is rotated while they run, with the stores rewritten in
// place as an operator would: first every trust store takes the new CA
// beside the old, then every key store a certificate of the new CA, then
// the trust stores drop the old CA. No link goes down, writes go on
// throughout, new handshakes present the new certificates, and at the end
// a peer with a certificate of the old CA is refused.
func TestQuorumTLSReloadCertFiles(t *testing.T) {
	oldCA, newCA := authtest.NewCA(t, "old-ca"), authtest.NewCA(t, "new-ca")
	logs := &syncBuffer{}
	type stores struct{ key, trust string }
	files := map[uint64]stores{}
	qs := map[uint64]*auth.QuorumTLS{}
	ms := startMembers(t, 3, 0, "", func(c *Config) {
		id := uint64(c.ServerID)
		c.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(logs, tWriter{t}), nil)).With("server", id)
		dir := t.TempDir()
		cert := oldCA.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: fmt.Sprintf("old-%d", id)}})
		f := stores{
			key:   authtest.WriteFile(t, dir, "key.pem", cert.PEM(t)),
			trust: authtest.WriteFile(t, dir, "trust.pem", oldCA.PEM()),
		}
		files[id] = f
		tl, err := auth.ParseTLS(func(k string) (string, bool) {
			v, ok := map[string]string{"ssl.quorum.keyStore.location": f.key, "ssl.quorum.trustStore.location": f.trust}[k]
			return v, ok
		}, "ssl.quorum.")
		if err != nil {
			t.Fatal(err)
		}
		q, err := auth.NewQuorumTLS(tl, true, c.Logger)
		if err != nil {
			t.Fatal(err)
		}
		q.Watch(10 * time.Millisecond)
		t.Cleanup(q.Close)
		qs[id] = q
		c.Ensemble.Listener = tls.NewListener(c.Ensemble.Listener, q.Listen)
		c.Ensemble.Dial = q.Dial
	})
	leaderOf(t, ms)
	addrs := []string{}
	for _, m := range ms {
		addrs = append(addrs, m.addr)
	}
	c, err := zk.Connect(t.Context(), strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, 20*time.Second, func() error {
		if n := strings.Count(logs.String(), "peer: link up"); n < 6 {
			return fmt.Errorf("%d link ends up, want 6", n)
		}
		return nil
	})
	linksUp := strings.Count(logs.String(), "peer: link up")

	// presented is the certificate member id shows a new handshake.
	presented := func(id uint64, trust *authtest.CA, client *authtest.Cert) (string, error) {
		cert := client.TLS()
		nc, err := tls.Dial("tcp", ms[id].srv.peers.Addr().String(), &tls.Config{RootCAs: trust.Pool(), ServerName: "127.0.0.1",
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }})
		if err != nil {
			return "", err
		}
		defer nc.Close()
		// TLS 1.3: a refused client certificate shows at the first read.
		_ = nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := nc.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			return "", err
		}
		return nc.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	rewrite := func(path string, data []byte) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	write := func() {
		t.Helper()
		n++
		waitFor(t, 20*time.Second, func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, _, err := c.Create(ctx, fmt.Sprintf("/rotating-%d", n), []byte("x"), 0, zk.OpenACLUnsafe())
			if errors.Is(err, zk.ErrNodeExists) {
				err = nil // an earlier try that lost its reply
			}
			return err
		})
	}

	both := append(oldCA.PEM(), newCA.PEM()...)
	for id := range ms {
		rewrite(files[id].trust, both)
	}
	write()
	for id := range ms {
		rewrite(files[id].key, newCA.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: fmt.Sprintf("new-%d", id)}}).PEM(t))
	}
	probe := newCA.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "probe"}})
	for id := range ms {
		waitFor(t, 10*time.Second, func() error {
			cn, err := presented(id, newCA, probe)
			if err != nil {
				return err
			}
			if cn != fmt.Sprintf("new-%d", id) {
				return fmt.Errorf("member %d presents %s", id, cn)
			}
			return nil
		})
	}
	write()
	for id := range ms {
		rewrite(files[id].trust, newCA.PEM())
	}
	// Once reloaded, a certificate of the old CA is refused.
	oldPeer := oldCA.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "old-peer"}})
	for id := range ms {
		waitFor(t, 10*time.Second, func() error {
			if _, err := presented(id, newCA, oldPeer); err == nil {
				return errors.New("a certificate of the old CA is still accepted")
			}
			return nil
		})
	}
	write()
	// Every member's dialling side uses the new stores as well: a fresh
	// dial from each to each other member succeeds.
	for from, q := range qs {
		for to := range ms {
			if to == from {
				continue
			}
			nc, err := q.Dial(t.Context(), ms[to].srv.peers.Addr().String())
			if err != nil {
				t.Fatalf("member %d dialling %d with the new stores: %v", from, to, err)
			}
			nc.Close()
		}
	}
	if got := strings.Count(logs.String(), "peer: link up"); got != linksUp || strings.Contains(logs.String(), "peer: link down") {
		t.Fatalf("links went down during the rotation (%d link-ups, %d before)", got, linksUp)
	}
	// Every member has every write. (On a loaded machine a member may
	// briefly lose its leader and drop clients: that is retried.)
	for id, m := range ms {
		waitFor(t, 20*time.Second, func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			f, err := zk.Connect(ctx, m.addr)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := f.Sync(ctx, "/"); err != nil {
				return fmt.Errorf("member %d: %w", id, err)
			}
			for i := 1; i <= n; i++ {
				if data, _, err := f.Get(ctx, fmt.Sprintf("/rotating-%d", i)); err != nil || string(data) != "x" {
					return fmt.Errorf("member %d: /rotating-%d: %q, %v", id, i, data, err)
				}
			}
			return nil
		})
	}
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
