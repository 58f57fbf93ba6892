package admin

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"

	"github.com/zoohq/zoo/internal/auth"
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
// net/http reads each from its own goroutine, so the sniff happens there,
// under the read deadline it sets.
type unifiedListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *unifiedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return auth.NewUnifiedConn(c, l.cfg), nil
}

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
	if uc, ok := r.Context().Value(connKey{}).(*auth.UnifiedConn); ok && uc.TLS() != nil {
		cs := uc.TLS().ConnectionState()
		return &cs
	}
	return nil
}
