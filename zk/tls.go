package zk

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// WithTLS makes the client speak TLS to the servers, as Apache's client
// does with zookeeper.client.secure=true (the servers' secureClientPort,
// or a port with client.portUnification). cfg holds the trusted roots and,
// for servers that ask for one, the client certificate; with no
// ServerName, each server's host name is checked against its certificate.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) { c.tls = cfg }
}

// startTLS runs the TLS handshake on a freshly dialled connection. On
// failure it closes nc.
func startTLS(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("zk: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}
