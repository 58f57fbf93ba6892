// Package admin is Zoo's AdminServer: Apache ZooKeeper 3.9's HTTP
// commands (GET <commandURL>/<name>, JSON answers with the same names,
// aliases, keys and status codes), so that probes, scripts and dashboards
// written for Apache's AdminServer work unchanged. It also serves the
// Prometheus endpoint (prometheus.go).
//
// The commands read the server through the same fourlw.Source the
// four-letter words use, plus a few optional hooks in Config; the package
// holds no server state of its own.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/metrics"
	"github.com/zoohq/zoo/internal/server/fourlw"
)

// Config is what the AdminServer serves.
type Config struct {
	// CommandURL is admin.commandURL; "" is "/commands".
	CommandURL string
	// IdleTimeout is admin.idleTimeout; 0 is 30 s.
	IdleTimeout time.Duration
	// Source is the server.
	Source fourlw.Source
	// Metrics are the server's metrics, for monitor.
	Metrics *metrics.Set
	// InitialConfig is the zoo.cfg text the server started with.
	InitialConfig string
	// SetTraceMask sets the trace mask (set_trace_mask); nil refuses.
	SetTraceMask func(int64)
	// LastSnapshot returns the zxid and time of the newest snapshot
	// (last_snapshot); ok is false when there is none.
	LastSnapshot func() (zxid int64, at time.Time, ok bool)
	// Ensemble describes the ensemble (leader, voting_view, zabstate,
	// observers); nil on a standalone server.
	Ensemble func() Ensemble
	// Snapshot and Restore are the snapshot and restore commands (issue
	// 11). Apache 3.9 requires an authenticated user with ALL on the root
	// for them (Auth).
	Snapshot, Restore http.Handler
	// Auth authenticates the users of the protected commands; nil refuses
	// every request for them (401 without credentials, 403 with).
	Auth   *Auth
	Logger *slog.Logger
}

// Ensemble is what the quorum commands show of an ensemble member.
type Ensemble struct {
	MyID          int64
	IsLeader      bool
	LeaderID      int64
	LeaderAddr    string // host:port of the leader's quorum port, or ""
	Voting        bool   // a voter, not an observer
	QuorumAddr    string
	ElectionAddr  string
	ClientAddr    string
	LastZxid      int64
	Term          int64
	Members       []Member
	ObserverCount int
}

// Member is one server of the membership (voting_view).
type Member struct {
	ID           int64
	QuorumAddr   string
	ElectionAddr string
	ClientAddr   string
	Observer     bool
}

// Status codes and messages of Apache's Commands.runCommand.
const (
	msgUnknown     = "Unknown command: "
	msgNotServing  = "This ZooKeeper instance is not currently serving requests"
	msgAuthMissing = "Auth info is missing for the command"
	msgNotAuthz    = "Not authorized"
)

// Handler returns the AdminServer's HTTP handler.
func Handler(cfg Config) http.Handler {
	if cfg.CommandURL == "" {
		cfg.CommandURL = "/commands"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{cfg: cfg, byName: map[string]*command{}}
	for _, c := range commands() {
		for _, n := range c.names {
			h.byName[n] = c
		}
		h.primary = append(h.primary, c.names[0])
	}
	sort.Strings(h.primary)
	return h
}

type handler struct {
	cfg     Config
	byName  map[string]*command
	primary []string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := strings.TrimSuffix(h.cfg.CommandURL, "/")
	path := r.URL.Path
	switch {
	case path == base || path == base+"/":
		h.list(w, r)
	case strings.HasPrefix(path, base+"/"):
		h.run(w, r, strings.TrimPrefix(path, base+"/"))
	default:
		http.NotFound(w, r)
	}
}

// list links every command, as Apache's CommandListServlet.
func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	base := strings.TrimSuffix(h.cfg.CommandURL, "/")
	for _, n := range h.primary {
		fmt.Fprintf(w, "<a href=\"%s/%s\">%s</a>\n<br/>\n", html.EscapeString(base), n, n)
	}
}

func (h *handler) run(w http.ResponseWriter, r *http.Request, name string) {
	c := h.byName[name]
	switch {
	case c == nil:
		// Apache answers an unknown command with 200, "to keep the
		// current behavior of existing commands".
		h.reply(w, http.StatusOK, errorResponse(name, msgUnknown+name))
		return
	case r.Method == http.MethodPost && c.post == nil, r.Method != http.MethodGet && r.Method != http.MethodPost:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case c.serverRequired && !h.cfg.Source.Serving():
		h.reply(w, http.StatusOK, errorResponse(c.names[0], msgNotServing))
		return
	case c.protected:
		if err := h.authorize(r); err != nil {
			status, msg := http.StatusUnauthorized, msgAuthMissing
			switch {
			case errors.Is(err, errNotAuthz):
				status, msg = http.StatusForbidden, msgNotAuthz
			case errors.Is(err, errNotAuthn):
				msg = msgNotAuthn
			}
			h.reply(w, status, errorResponse(c.names[0], msg))
			return
		}
	}
	// The snapshot and restore hooks answer for themselves (a snapshot
	// streams); without one the command is disabled, Apache's 503 for
	// admin.snapshot.enabled=false.
	if hook := h.hook(c.names[0]); hook != nil {
		hook.ServeHTTP(w, r)
		return
	}
	resp := newObj()
	status := http.StatusOK
	switch {
	case c.get != nil && r.Method == http.MethodGet:
		status = c.get(h, r, resp)
	case c.post != nil && r.Method == http.MethodPost:
		status = c.post(h, r, resp)
	}
	if status == 0 {
		status = http.StatusOK
	}
	resp.put("command", c.names[0])
	if _, ok := resp.vals["error"]; !ok {
		resp.put("error", nil)
	}
	h.reply(w, status, resp)
}

// authorize checks a protected command's request. Without Config.Auth
// every request is refused, with Apache's codes: 401 without credentials,
// 403 with them.
func (h *handler) authorize(r *http.Request) error {
	info, ok := r.Header["Authorization"]
	if !ok || len(info) == 0 {
		return errAuthMissing
	}
	if h.cfg.Auth == nil {
		return errNotAuthz
	}
	return h.cfg.Auth.authorize(r, info[0])
}

func (h *handler) hook(name string) http.Handler {
	switch name {
	case "snapshot":
		return h.cfg.Snapshot
	case "restore":
		return h.cfg.Restore
	}
	return nil
}

func errorResponse(name, msg string) *obj {
	return newObj().put("command", name).put("error", msg)
}

func (h *handler) reply(w http.ResponseWriter, status int, o *obj) {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		h.cfg.Logger.Warn("admin: encoding a response", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Server is a running AdminServer.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Start serves h on ln until Close. The caller's listener is owned by the
// server from then on.
func Start(ln net.Listener, h http.Handler, idle time.Duration) *Server {
	if idle <= 0 {
		idle = 30 * time.Second
	}
	s := &Server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       idle,
			ReadTimeout:       idle,
			WriteTimeout:      idle,
			ConnContext:       withConn,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s
}

// Addr is the address served.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, waiting for the requests under way until ctx
// ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
