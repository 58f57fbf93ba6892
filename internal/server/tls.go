package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/rawsock"
)

// Secure is a listener's TLS: Apache's secureClientPort, or with Unified
// its client.portUnification, where one port takes TLS and plaintext
// clients alike.
type Secure struct {
	// TLS is the handshake's configuration; its GetConfigForClient may
	// hand out reloaded certificates (auth.ServerTLS.Config).
	TLS *tls.Config
	// Unified tells TLS from plaintext by the first byte: a TLS record
	// starts with 0x16 (handshake), a ZooKeeper frame with its length's
	// high byte.
	Unified bool
	// HandshakeTimeout bounds the wait for the client's first byte
	// (ssl.handshakeDetectionTimeoutMillis); the whole handshake may take
	// up to HandshakeLimit, or HandshakeTimeout if that is longer.
	HandshakeTimeout time.Duration
	// X509 is X509AuthenticationProvider (authProvider.x509, which
	// Apache registers by itself when secureClientPort is set): a
	// verified client certificate gives the connection the id
	// x509:<subject>. Without it a connection presenting a certificate is
	// closed, as Apache closes it when it finds no x509 provider.
	X509 bool
	// X509SuperUser is zookeeper.X509AuthenticationProvider.superUser: the
	// subject that also gets the super id.
	X509SuperUser string
}

// HandshakeLimit bounds a whole TLS handshake: Netty's SslHandler default,
// which Apache's client port keeps. A JVM client on a busy machine can
// take seconds to send its first records.
const HandshakeLimit = 10 * time.Second

// tlsRecordHandshake is the first byte of a TLS ClientHello.
const tlsRecordHandshake = 0x16

// ServeTLS accepts TLS connections (or, with sec.Unified, TLS and
// plaintext ones) on ln until Shutdown, as Serve does.
func (s *Server) ServeTLS(ln net.Listener, sec *Secure) error {
	if sec == nil || sec.TLS == nil {
		return errors.New("server: ServeTLS needs a TLS configuration")
	}
	return s.serve(ln, sec)
}

// startTLS runs the handshake before anything else is read, within the
// handshake timeout, and gives the connection its x509 ids. A unified
// port whose client does not start with a TLS record stays plaintext.
func (c *conn) startTLS() error {
	sec := c.sec
	timeout := sec.HandshakeTimeout
	if timeout <= 0 {
		timeout = auth.DefaultHandshakeTimeout
	}
	start := time.Now()
	_ = c.nc.SetDeadline(start.Add(timeout))
	b, err := c.br.Peek(1)
	if err != nil {
		return fmt.Errorf("nothing received within ssl.handshakeDetectionTimeoutMillis (%v): %w", timeout, err)
	}
	if sec.Unified && b[0] != tlsRecordHandshake {
		_ = c.nc.SetDeadline(time.Time{})
		return nil
	}
	deadline := start.Add(max(timeout, HandshakeLimit))
	_ = c.nc.SetDeadline(deadline)
	// The TLS layer reads what the sniffing buffered, then the socket.
	tc := tls.Server(&bufferedConn{Conn: c.nc, r: c.br}, sec.TLS)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	_ = c.nc.SetDeadline(time.Time{})
	ids, err := x509IDs(tc.ConnectionState(), sec)
	if err != nil {
		return err
	}
	c.addAuth(ids)
	c.wire = tc
	c.br = newConnReader(tc)
	return nil
}

// errTLSOnPlaintext ends a plaintext connection whose client speaks TLS;
// the reason is logged where it is found.
var errTLSOnPlaintext = errors.New("server: TLS client on a plaintext port")

// errNoX509Provider: a client certificate with no x509 provider.
var errNoX509Provider = errors.New("the client presented a certificate but no x509 auth provider is configured (authProvider.x509); closing, as Apache does")

// x509IDs are the ids a verified client certificate gives, as Apache's
// X509AuthenticationProvider.handleAuthentication makes them.
func x509IDs(cs tls.ConnectionState, sec *Secure) ([]jute.Id, error) {
	if len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil, nil // no certificate (clientAuth want or none)
	}
	if !sec.X509 {
		return nil, errNoX509Provider
	}
	name, err := auth.X509ID(cs.PeerCertificates[0])
	if err != nil {
		return nil, err
	}
	ids := []jute.Id{{Scheme: acl.SchemeX509, ID: name}}
	if sec.X509SuperUser != "" && name == sec.X509SuperUser {
		ids = append([]jute.Id{{Scheme: acl.SchemeSuper, ID: name}}, ids...)
	}
	return ids, nil
}

// bufferedConn reads through r, which holds bytes already read from Conn.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// looksLikeTLS reports whether the first bytes of a plaintext connection
// are a TLS ClientHello record: 0x16, then major version 3. As a frame
// length that is over 369 MB, which no jute.maxbuffer allows.
func looksLikeTLS(head []byte) bool {
	return len(head) >= 2 && head[0] == tlsRecordHandshake && head[1] == 3
}

// writeFrames writes a batch of frames: with writev on a socket, and on
// TLS joined into chunks of up to tlsChunk bytes, which the TLS layer
// cuts into full records, where a Write per frame would cost a record and
// a system call per frame. Chunk buffers come from a pool, so an idle
// connection holds none.
func writeFrames(nc net.Conn, frames [][]byte) error {
	if _, isTLS := nc.(*tls.Conn); !isTLS {
		return rawsock.Writev(nc, frames)
	}
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	b := (*bp)[:0]
	for _, f := range frames {
		if len(b) > 0 && len(b)+len(f) > tlsChunk {
			if _, err := nc.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		if len(f) >= tlsChunk {
			if _, err := nc.Write(f); err != nil {
				return err
			}
			continue
		}
		b = append(b, f...)
	}
	if len(b) > 0 {
		_, err := nc.Write(b)
		return err
	}
	return nil
}

// tlsChunk is the most writeFrames joins into one TLS write: four full
// TLS records.
const tlsChunk = 64 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, tlsChunk); return &b }}
