package auth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// Quorum TLS (sslQuorum=true with the ssl.quorum.* settings): mutual TLS
// between the servers of an ensemble. Each side presents its key store's
// certificate and checks the other's against the trust store; as in
// Apache's QuorumX509Util, a server's host name is checked by the dialling
// side (ssl.quorum.hostnameVerification) and the dialling server's address
// by the accepting side (ssl.quorum.clientHostnameVerification), both on
// by default.

// quorumHandshakeLimit bounds a dial and its handshake.
const quorumHandshakeLimit = 10 * time.Second

// QuorumTLS is the configuration of both ends of quorum connections.
// Both take the stores as last loaded: Watch reloads them when their
// files change (sslQuorumReloadCertFiles), and connections already open
// keep the certificates they were made with.
type QuorumTLS struct {
	// Listen is the accepting side's configuration.
	Listen *tls.Config
	// Dial opens a connection to a peer and completes the handshake.
	Dial func(ctx context.Context, addr string) (net.Conn, error)

	stores *ServerTLS
	dial   atomic.Pointer[tls.Config]
}

// NewQuorumTLS loads the stores named by t (parsed from "ssl.quorum.").
// clientHostnameVerification is ssl.quorum.clientHostnameVerification
// (Apache's default for the quorum is true, and it applies only when
// hostnameVerification is on). log gets reloads.
func NewQuorumTLS(t TLS, clientHostnameVerification bool, log *slog.Logger) (*QuorumTLS, error) {
	if t.TrustStore.Path == "" {
		return nil, &SettingError{Key: t.Prefix + "trustStore.location", Err: fmt.Errorf("%w: quorum TLS needs a trust store", ErrSetting)}
	}
	if t.ClientAuth != tls.RequireAndVerifyClientCert {
		return nil, &SettingError{Key: t.Prefix + "clientAuth", Err: fmt.Errorf("%w: quorum TLS is mutual; only need is supported", ErrSetting)}
	}
	q := &QuorumTLS{}
	loadDial := func() error {
		c, err := t.ClientConfig("")
		if err != nil {
			return err
		}
		if c.Certificates == nil {
			return &SettingError{Key: t.Prefix + "keyStore.location", Err: fmt.Errorf("%w: quorum TLS needs a key store", ErrSetting)}
		}
		q.dial.Store(c)
		return nil
	}
	if err := loadDial(); err != nil {
		return nil, err
	}
	stores, err := NewServerTLS(t, log)
	if err != nil {
		return nil, err
	}
	stores.onReload = loadDial
	q.stores = stores
	checkAddr := t.HostnameVerification && clientHostnameVerification
	q.Listen = &tls.Config{
		MinVersion: t.MinVersion,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c := stores.cur.Load()
			if checkAddr {
				c = c.Clone()
				c.VerifyConnection = verifyPeerAddress(hello.Conn.RemoteAddr())
			}
			return c, nil
		},
	}
	dialer := &net.Dialer{Timeout: quorumHandshakeLimit}
	q.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		cfg := q.dial.Load()
		if !cfg.InsecureSkipVerify {
			host, _, _ := net.SplitHostPort(addr)
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		_ = nc.SetDeadline(time.Now().Add(max(t.HandshakeTimeout, quorumHandshakeLimit)))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("quorum TLS handshake with %s: %w", addr, err)
		}
		_ = nc.SetDeadline(time.Time{})
		return tc, nil
	}
	return q, nil
}

// Reload reads the stores again now; on failure the previous ones stay.
func (q *QuorumTLS) Reload() error { return q.stores.Reload() }

// Watch reloads the stores whenever their files change, checking every
// interval, until Close (sslQuorumReloadCertFiles).
func (q *QuorumTLS) Watch(interval time.Duration) { q.stores.Watch(interval) }

// Close stops Watch.
func (q *QuorumTLS) Close() { q.stores.Close() }

// verifyPeerAddress checks that a dialling server's certificate names the
// address it connects from, as Apache's ZKTrustManager does without
// reverse DNS lookups (ssl.quorum.allowReverseDnsLookup=false).
func verifyPeerAddress(remote net.Addr) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("auth: the peer sent no certificate")
		}
		ap, err := netip.ParseAddrPort(remote.String())
		if err != nil {
			return fmt.Errorf("auth: peer address %s: %w", remote, err)
		}
		return cs.PeerCertificates[0].VerifyHostname(ap.Addr().Unmap().String())
	}
}

// UnifiedListener wraps the quorum listener for Apache's portUnification:
// each connection is told apart by its first byte, a TLS handshake record
// (0x16) or anything else, plaintext, so that a running ensemble can
// switch to sslQuorum one member at a time. TLS connections are checked
// as on a TLS-only port. Accept does not wait for the first byte: a
// connection decides on its first Read or Write, under the deadline its
// user sets (the peer handshake's).
func (q *QuorumTLS) UnifiedListener(ln net.Listener) net.Listener {
	return &unifiedListener{Listener: ln, cfg: q.Listen}
}

type unifiedListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *unifiedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return NewUnifiedConn(c, l.cfg), nil
}
