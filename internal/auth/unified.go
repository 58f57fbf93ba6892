package auth

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync"
)

// UnifiedConn is an accepted connection of a port that serves TLS and
// plaintext at once (Apache's portUnification), told apart by its first
// byte: a TLS handshake record (0x16) or anything else. Neither ZooKeeper's
// quorum protocol nor HTTP starts with that byte. The connection decides
// on its first Read or Write, from its user's goroutine and under the
// deadline its user sets, so that Accept never waits on a slow client.
// Deadlines, addresses and Close go to the socket, which the TLS layer
// uses too.
type UnifiedConn struct {
	net.Conn
	cfg   *tls.Config
	once  sync.Once
	inner net.Conn // the TLS connection, or the socket with the byte read put back
	tls   *tls.Conn
	err   error
}

// NewUnifiedConn wraps an accepted connection; cfg serves the TLS ones.
func NewUnifiedConn(c net.Conn, cfg *tls.Config) *UnifiedConn {
	return &UnifiedConn{Conn: c, cfg: cfg}
}

// tlsHandshakeRecord is the first byte of a TLS ClientHello.
const tlsHandshakeRecord = 0x16

func (c *UnifiedConn) sniff() error {
	c.once.Do(func() {
		var first [1]byte
		if _, err := io.ReadFull(c.Conn, first[:]); err != nil {
			c.err = err
			return
		}
		pc := &prefixConn{Conn: c.Conn, r: io.MultiReader(bytes.NewReader(first[:]), c.Conn)}
		if first[0] != tlsHandshakeRecord {
			c.inner = pc
			return
		}
		c.tls = tls.Server(pc, c.cfg)
		c.inner = c.tls
	})
	return c.err
}

func (c *UnifiedConn) Read(p []byte) (int, error) {
	if err := c.sniff(); err != nil {
		return 0, err
	}
	return c.inner.Read(p)
}

func (c *UnifiedConn) Write(p []byte) (int, error) {
	if err := c.sniff(); err != nil {
		return 0, err
	}
	return c.inner.Write(p)
}

// TLS is the connection's TLS layer once its first byte said TLS, and nil
// before that or when it is plaintext. Its handshake is done once a Read
// has returned data.
func (c *UnifiedConn) TLS() *tls.Conn { return c.tls }

// prefixConn reads through r, which holds bytes already read from Conn.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (p *prefixConn) Read(b []byte) (int, error) { return p.r.Read(b) }
