package admin

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPS is how the AdminServer speaks TLS, as Apache 3.9's JettyAdminServer:
// admin.forceHttps serves HTTPS only; admin.portUnification serves HTTP and
// HTTPS on the one port, told apart by the first byte of each connection.
// Apache builds the TLS context from the ssl.quorum.* stores (its
// QuorumX509Util), with admin.needClientAuth deciding whether a client
// certificate is required; without it none is asked for.
type HTTPS struct {
	Config  *tls.Config
	Unified bool // portUnification without forceHttps
}

// Listen wraps ln so that it serves TLS as h says; a nil h leaves ln as it
// is (plain HTTP, Apache's default).
func (h *HTTPS) Listen(ln net.Listener) net.Listener {
	if h == nil || h.Config == nil {
		return ln
	}
	if !h.Unified {
		return &tlsListener{Listener: ln, cfg: h.Config}
	}
	return &unifiedListener{Listener: ln, cfg: h.Config}
}

// tlsListener serves TLS only. It returns *tls.Conn so that net/http does
// the handshake and fills Request.TLS.
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tls.Server(c, l.cfg), nil
}

// unifiedListener returns connections that decide on their first read
// whether they are TLS, so that Accept never waits on a slow client.
type unifiedListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *unifiedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, cfg: l.cfg}, nil
}

// tlsRecordHandshake is the first byte of a TLS ClientHello record, which
// no HTTP method starts with.
const tlsRecordHandshake = 0x16

// sniffConn is a connection of a unified port: TLS if its first byte is a
// TLS handshake record, plain otherwise. net/http reads it from the
// connection's own goroutine, so the sniff happens there.
type sniffConn struct {
	net.Conn
	cfg  *tls.Config
	once sync.Once
	rd   net.Conn // what reads and writes go to once sniffed
	tls  *tls.Conn
	err  error
}

func (c *sniffConn) sniff() {
	br := bufio.NewReaderSize(c.Conn, 1)
	head, err := br.Peek(1)
	if err != nil {
		c.err = err
		return
	}
	pc := &peekedConn{Conn: c.Conn, r: br}
	if head[0] != tlsRecordHandshake {
		c.rd = pc
		return
	}
	c.tls = tls.Server(pc, c.cfg)
	if err := c.tls.HandshakeContext(context.Background()); err != nil {
		c.err = err
		return
	}
	c.rd = c.tls
}

func (c *sniffConn) Read(p []byte) (int, error) {
	c.once.Do(c.sniff)
	if c.err != nil {
		return 0, c.err
	}
	return c.rd.Read(p)
}

func (c *sniffConn) Write(p []byte) (int, error) {
	c.once.Do(c.sniff)
	if c.err != nil {
		return 0, c.err
	}
	return c.rd.Write(p)
}

// SetDeadline and friends reach the raw connection, which also bounds the
// handshake: net/http sets the read deadline before its first read.
func (c *sniffConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(t) }
func (c *sniffConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(t) }
func (c *sniffConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(t) }

// state is the TLS state of a sniffed connection, nil when it is plain.
func (c *sniffConn) state() *tls.ConnectionState {
	if c.tls == nil {
		return nil
	}
	cs := c.tls.ConnectionState()
	return &cs
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }

type connKey struct{}

// withConn keeps the connection in the request's context, for the TLS
// state of unified connections, which net/http cannot see.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// tlsState is the TLS state a request came over, or nil.
func tlsState(r *http.Request) *tls.ConnectionState {
	if r.TLS != nil {
		return r.TLS
	}
	if sc, ok := r.Context().Value(connKey{}).(*sniffConn); ok {
		return sc.state()
	}
	return nil
}
