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
		Ensemble:      console.EnsembleOf(srv),
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
