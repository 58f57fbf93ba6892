package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/zoohq/zoo/internal/admin"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/console"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/zk"
)

// withConsole serves the web console beside the AdminServer's commands:
// /console/ is the console, / redirects there, anything else is the
// AdminServer's. The returned func ends the console's sessions.
func withConsole(log *slog.Logger, cfg *config.Config, srv *server.Server, https *admin.HTTPS, commands http.Handler) (http.Handler, func()) {
	c := console.New(console.Config{
		Connect:       consoleConnect(cfg),
		Source:        srv.Source(),
		Metrics:       srv.Metrics(),
		Ensemble:      consoleEnsemble(srv),
		SecureCookies: https != nil && !https.Unified,
		Logger:        log.With("component", "console"),
	})
	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix+"/", c)
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && r.Method == http.MethodGet {
			http.Redirect(w, r, console.DefaultPrefix+"/", http.StatusFound)
			return
		}
		commands.ServeHTTP(w, r)
	}))
	return mux, c.Close
}

// consoleConnect opens the console's client sessions on this server's
// plain client port, over loopback when it listens on every address; nil
// (no tree in the console) when there is no plain client port.
func consoleConnect(cfg *config.Config) func(context.Context, ...zk.Option) (*zk.Client, error) {
	if cfg.ClientPort == 0 {
		return nil
	}
	host := cfg.ClientPortAddress
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, strconv.Itoa(cfg.ClientPort))
	return func(ctx context.Context, opts ...zk.Option) (*zk.Client, error) {
		return zk.Connect(ctx, addr, append([]zk.Option{zk.WithReadOnly(true)}, opts...)...)
	}
}

// consoleEnsemble is the ensemble as the console shows it.
func consoleEnsemble(srv *server.Server) func() (console.Ensemble, bool) {
	return func() (console.Ensemble, bool) {
		q, ok := srv.Quorum()
		if !ok {
			return console.Ensemble{}, false
		}
		e := console.Ensemble{MyID: q.MyID, LeaderID: q.LeaderID, Term: q.Term, Zxid: q.LastZxid}
		for _, m := range q.Members {
			role := "follower"
			switch {
			case m.Observer:
				role = "observer"
			case m.ID == q.LeaderID:
				role = "leader"
			}
			ps := srv.Peer(uint64(m.ID))
			e.Members = append(e.Members, console.Member{ID: m.ID, Role: role,
				QuorumAddr: m.QuorumAddr, ClientAddr: m.ClientAddr,
				Match: ps.Match, Lag: ps.Lag, Live: ps.Live || m.ID == q.MyID, Self: m.ID == q.MyID})
		}
		return e, true
	}
}
