package zk

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Dialer opens a connection to a server; (*net.Dialer).DialContext is one.
// A test can pass a Dialer that goes through a proxy or fails on demand.
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// Option configures Connect.
type Option func(*config)

type config struct {
	sessionTimeout time.Duration
	auth           []authInfo
	logger         *slog.Logger
	readOnly       bool
	dialer         Dialer
	tls            *tls.Config
	onState        func(State)
	maxInFlight    int
	watchBuffer    int
	maxFrame       int
	sessionID      int64
	password       []byte
	hostProvider   func(hosts []string) HostProvider
	sasl           saslStarter
}

type authInfo struct {
	scheme string
	auth   []byte
}

// Defaults.
const (
	DefaultSessionTimeout = 10 * time.Second
	DefaultMaxInFlight    = 1024
	DefaultWatchBuffer    = 1024
)

func defaultConfig() config {
	return config{
		sessionTimeout: DefaultSessionTimeout,
		dialer:         (&net.Dialer{}).DialContext,
		maxInFlight:    DefaultMaxInFlight,
		watchBuffer:    DefaultWatchBuffer,
		maxFrame:       jute.DefaultMaxBuffer,
	}
}

// WithSessionTimeout asks for a session timeout; the server bounds it
// (by default to 2-20 ticks) and Client.SessionTimeout reports what it
// granted. The client pings after a third of the timeout without sending
// and gives up on a server it has not heard from for two thirds of it.
// The default is DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) Option {
	return func(c *config) { c.sessionTimeout = d }
}

// WithAuth adds credentials (as AddAuth) that are sent on every connection
// before any request. It may be given more than once. If a server rejects
// them the session ends in StateAuthFailed.
func WithAuth(scheme string, auth []byte) Option {
	return func(c *config) {
		c.auth = append(c.auth, authInfo{scheme, append([]byte(nil), auth...)})
	}
}

// WithLogger sets the logger for connection and session events. Nil (the
// default) discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithReadOnly lets the client connect to a server that has lost its
// quorum and serves reads only; the state is then StateConnectedReadOnly
// and writes fail with ErrNotReadOnly.
func WithReadOnly(allowed bool) Option {
	return func(c *config) { c.readOnly = allowed }
}

// WithDialer replaces the dialer (by default a net.Dialer).
func WithDialer(d Dialer) Option {
	return func(c *config) { c.dialer = d }
}

// WithStateCallback calls f with every session state change, on the
// goroutine that runs asynchronous completions, in order with them (as
// the Java client's default watcher). f must not block for long: it holds
// up every later completion.
func WithStateCallback(f func(State)) Option {
	return func(c *config) { c.onState = f }
}

// WithMaxInFlight bounds the calls that have been accepted but not yet
// answered (queued or sent). A call beyond it waits for room, or for its
// context. The default is DefaultMaxInFlight.
func WithMaxInFlight(n int) Option {
	return func(c *config) { c.maxInFlight = max(n, 1) }
}

// WithWatchBuffer sets the capacity of each persistent watch's channel
// (AddWatch). When a consumer falls so far behind that the channel is
// full, the watch ends: its last event carries ErrWatchOverflow and the
// channel is closed. Events are never dropped silently. The default is
// DefaultWatchBuffer; the minimum is 2.
func WithWatchBuffer(n int) Option {
	return func(c *config) { c.watchBuffer = max(n, 2) }
}

// WithMaxFrameSize bounds the size of a frame in either direction (the
// server's jute.maxbuffer). A larger request fails with ErrRequestTooLarge
// without being sent; a larger reply breaks the connection. The default
// is Apache's, 0xfffff bytes.
func WithMaxFrameSize(n int) Option {
	return func(c *config) { c.maxFrame = n }
}

// WithSession reattaches to an existing session, given its id and password
// (Client.SessionID, Client.SessionPassword), as a process that restarts
// may do. If the session has expired Connect fails with ErrSessionExpired.
func WithSession(id int64, password []byte) Option {
	return func(c *config) {
		c.sessionID = id
		c.password = append([]byte(nil), password...)
	}
}
