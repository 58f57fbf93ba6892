// Package console is Zoo's web console, served on the AdminServer's port:
// a single page (embedded, no CDN, no build step) and the JSON API it
// polls.
//
// The console reads and writes znodes as an ordinary ZooKeeper client of
// its own server (Config.Connect), so every request takes the same path
// and the same ACL checks as any client's: an anonymous session until a
// user logs in, then a session carrying that user's digest identity. A
// write the ACLs forbid fails with ZooKeeper's NoAuth, as it would for
// zkCli.
//
// Sessions, watches, the ensemble and the live charts come from the
// server's fourlw.Source and metrics.Set, the same views the four-letter
// words and the AdminServer use.
//
// The API, under Prefix (default /console):
//
//	GET    /api/me                         who is logged in, and the CSRF token
//	POST   /api/login   {"user","password"} digest login; sets the session cookie
//	POST   /api/logout
//	GET    /api/node?path=/a               data, Stat, ACL, children
//	GET    /api/search?q=foo&path=/        paths containing q (bounded walk)
//	POST   /api/node    {"path","data","mode","acl"}     create
//	PUT    /api/node    {"path","data","version"}        set data
//	DELETE /api/node?path=/a&version=-1                 delete
//	GET    /api/sessions                   sessions and watches by path
//	GET    /api/ensemble                   members, roles, term, zxid, lag, links
//	GET    /api/stats                      one sample for the live charts
//
// Writes need the session cookie (HttpOnly, SameSite=Strict) and the
// CSRF token in the X-Zoo-CSRF header.
package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/zoohq/zoo/internal/metrics"
	"github.com/zoohq/zoo/internal/server/fourlw"
	"github.com/zoohq/zoo/zk"
)

//go:embed assets
var assets embed.FS

// DefaultPrefix is where the console is served.
const DefaultPrefix = "/console"

// Config is what the console shows and how it reaches the server.
type Config struct {
	// Prefix is the URL path the console is served under; "" is
	// DefaultPrefix.
	Prefix string
	// Connect opens a client session to this server with opts (the
	// console adds zk.WithAuth for a logged-in user). nil: the tree is
	// not available (a server with no plain client port).
	Connect func(ctx context.Context, opts ...zk.Option) (*zk.Client, error)
	// Source is the server, for sessions and watches.
	Source fourlw.Source
	// Metrics are the server's metrics, for the charts.
	Metrics *metrics.Set
	// Ensemble describes the ensemble; nil (or ok false) on a standalone
	// server.
	Ensemble func() (Ensemble, bool)
	// SecureCookies marks the session cookie Secure (the AdminServer
	// serves HTTPS only).
	SecureCookies bool
	// MaxLogins bounds the logged-in console sessions (each holds a
	// ZooKeeper session); 0 is 32. The oldest is logged out past it.
	MaxLogins int
	// IdleLogout ends a console login unused for this long; 0 is 30 min.
	IdleLogout time.Duration
	Now        func() time.Time // nil is time.Now
	Logger     *slog.Logger
}

// Ensemble is the ensemble as this member sees it.
type Ensemble struct {
	MyID     int64    `json:"myId"`
	LeaderID int64    `json:"leaderId"`
	Term     int64    `json:"term"`
	Zxid     int64    `json:"zxid"`
	Members  []Member `json:"members"`
}

// Member is one server of the ensemble. Match and Lag are known on the
// leader only (-1 elsewhere); Live is whether this member has a working
// link to it (always true for itself).
type Member struct {
	ID         int64  `json:"id"`
	Role       string `json:"role"` // leader, follower, observer
	QuorumAddr string `json:"quorumAddr"`
	ClientAddr string `json:"clientAddr"`
	Match      int64  `json:"match"`
	Lag        int64  `json:"lag"`
	Live       bool   `json:"live"`
	Self       bool   `json:"self"`
}

// Console is the console's handler. Close ends its ZooKeeper sessions.
type Console struct {
	cfg    Config
	mux    *http.ServeMux
	logins *logins

	mu     sync.Mutex
	anon   *zk.Client // the anonymous session, opened on first use
	closed bool
}

// New returns the console.
func New(cfg Config) *Console {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxLogins <= 0 {
		cfg.MaxLogins = 32
	}
	if cfg.IdleLogout <= 0 {
		cfg.IdleLogout = 30 * time.Minute
	}
	c := &Console{cfg: cfg, logins: newLogins(cfg.MaxLogins, cfg.IdleLogout, cfg.Now)}
	c.routes()
	return c
}

func (c *Console) routes() {
	p := c.cfg.Prefix
	static, _ := fs.Sub(assets, "assets")
	files := http.StripPrefix(p+"/", http.FileServer(http.FS(static)))
	m := http.NewServeMux()
	m.Handle("GET "+p+"/", noCache(files))
	m.Handle("GET "+p, http.RedirectHandler(p+"/", http.StatusFound))
	m.HandleFunc("GET "+p+"/api/me", c.me)
	m.HandleFunc("POST "+p+"/api/login", c.login)
	m.HandleFunc("POST "+p+"/api/logout", c.write(c.logout))
	m.HandleFunc("GET "+p+"/api/node", c.getNode)
	m.HandleFunc("GET "+p+"/api/search", c.search)
	m.HandleFunc("POST "+p+"/api/node", c.write(c.createNode))
	m.HandleFunc("PUT "+p+"/api/node", c.write(c.setNode))
	m.HandleFunc("DELETE "+p+"/api/node", c.write(c.deleteNode))
	m.HandleFunc("GET "+p+"/api/sessions", c.sessions)
	m.HandleFunc("GET "+p+"/api/ensemble", c.ensemble)
	m.HandleFunc("GET "+p+"/api/stats", c.stats)
	c.mux = m
}

// noCache keeps browsers from holding an old console after an upgrade.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the console and its API.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// The page loads nothing from elsewhere, and nothing may frame it.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	c.mux.ServeHTTP(w, r)
}

// Close ends the console's ZooKeeper sessions; the console answers
// requests for the tree with 503 from then on.
func (c *Console) Close() {
	c.mu.Lock()
	anon := c.anon
	c.anon, c.closed = nil, true
	c.mu.Unlock()
	if anon != nil {
		_ = anon.Close()
	}
	c.logins.closeAll()
}

// Errors of the console's API.
var (
	// ErrNoTree is returned when the console has no way to reach the
	// tree (no plain client port, or the console is closed).
	ErrNoTree = errors.New("console: the tree is not available (the console needs a plain clientPort)")
	// ErrLoginNeeded is returned for a write without a login.
	ErrLoginNeeded = errors.New("console: log in to make changes")
	// ErrCSRF is returned for a write without the page's CSRF token.
	ErrCSRF = errors.New("console: missing or wrong CSRF token; reload the page")
)

// client returns the ZooKeeper session a request runs under: the user's
// when logged in, else the shared anonymous one.
func (c *Console) client(ctx context.Context, r *http.Request) (*zk.Client, error) {
	if l := c.logins.get(r); l != nil {
		return l.client, nil
	}
	return c.anonymous(ctx)
}

// anonymous returns the anonymous session, opening it (again, after an
// expiry) when needed.
func (c *Console) anonymous(ctx context.Context) (*zk.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.cfg.Connect == nil {
		return nil, ErrNoTree
	}
	if c.anon != nil && !dead(c.anon) {
		return c.anon, nil
	}
	if c.anon != nil {
		_ = c.anon.Close()
	}
	cl, err := c.cfg.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c.anon = cl
	return cl, nil
}

// apiError is the JSON body of every failed API call: the message, and for
// a ZooKeeper error its code and Apache's name for it.
type apiError struct {
	Error string `json:"error"`
	Code  int32  `json:"code,omitempty"`
	Name  string `json:"name,omitempty"`
}

// fail answers err with a status that says what kind of failure it is.
func (c *Console) fail(w http.ResponseWriter, err error) {
	status, body := http.StatusInternalServerError, apiError{Error: err.Error()}
	var code zk.Code
	switch {
	case errors.As(err, &code):
		body.Code, body.Name = int32(code), code.String()
		body.Error = strings.TrimPrefix(err.Error(), "zk: ")
		status = codeStatus(code)
	case errors.Is(err, ErrLoginNeeded):
		status = http.StatusUnauthorized
	case errors.Is(err, ErrCSRF):
		status = http.StatusForbidden
	case errors.Is(err, ErrNoTree), errors.Is(err, zk.ErrClosed), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
	case errors.Is(err, errBadRequest):
		status = http.StatusBadRequest
	}
	if status == http.StatusInternalServerError {
		c.cfg.Logger.Warn("console: request failed", "err", err)
	}
	writeJSON(w, status, body)
}

// codeStatus maps a ZooKeeper error code to the HTTP status the API
// answers it with.
func codeStatus(code zk.Code) int {
	switch error(code) {
	case zk.ErrNoNode:
		return http.StatusNotFound
	case zk.ErrNoAuth, zk.ErrAuthFailed:
		return http.StatusForbidden
	case zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty, zk.ErrNoChildrenForEphemerals:
		return http.StatusConflict
	case zk.ErrBadArguments, zk.ErrInvalidACL:
		return http.StatusBadRequest
	case zk.ErrConnectionLoss, zk.ErrOperationTimeout, zk.ErrSessionExpired:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

var errBadRequest = errors.New("console: bad request")

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// dead reports whether a client's session has ended for good.
func dead(cl *zk.Client) bool {
	switch cl.State() {
	case zk.StateExpired, zk.StateAuthFailed, zk.StateClosed:
		return true
	}
	return false
}
