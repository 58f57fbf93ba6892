package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zoohq/zoo/internal/admin"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

// startAdmin starts the AdminServer (admin.enableServer, on by default as
// in Apache) and returns what stops it. As in Apache, a standalone server
// whose AdminServer cannot bind does not start; an ensemble member warns.
func startAdmin(log *slog.Logger, cfg *config.Config, srv *server.Server) (stop func(), err error) {
	if !cfg.AdminEnableServer {
		return func() {}, nil
	}
	https, err := adminHTTPS(log, cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.AdminAddr())
	if err != nil {
		err = fmt.Errorf("AdminServer (admin.serverAddress, admin.serverPort; admin.enableServer=false turns it off): %w", err)
		if cfg.Distributed() {
			// Apache's QuorumPeer only warns: a member serves on.
			log.Warn("problem starting the AdminServer", "err", err)
			return func() {}, nil
		}
		return nil, err // as Apache's ZooKeeperServerMain, which exits
	}
	// initial_configuration shows the zoo.cfg read at start (none for
	// the embedded default, whose source is not a file).
	var initial string
	if b, err := os.ReadFile(cfg.Pos("").File); err == nil {
		initial = string(b)
	}
	h := admin.Handler(admin.Config{
		CommandURL:    cfg.AdminCommandURL,
		Source:        srv.Source(),
		Metrics:       srv.Metrics(),
		InitialConfig: initial,
		SetTraceMask:  srv.SetTraceMask,
		LastSnapshot:  srv.LastSnapshot,
		Ensemble:      ensembleView(srv),
		Auth:          adminAuth(cfg, srv),
		Snapshot:      adminSnapshot(log, cfg, srv),
		Restore:       adminRestore(log, cfg, srv),
		Logger:        log,
	})
	h, closeConsole := withConsole(log, cfg, srv, https, h)
	idle := time.Duration(cfg.AdminIdleTimeout) * time.Millisecond
	as := admin.Start(https.Listen(ln), h, idle)
	scheme := "http"
	if https != nil {
		scheme = "https"
	}
	log.Info("AdminServer serving", "url", scheme+"://"+ln.Addr().String()+cfg.AdminCommandURL,
		"console", scheme+"://"+ln.Addr().String()+"/console/", "portUnification", https != nil && https.Unified)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := as.Close(ctx); err != nil {
			log.Warn("stopping the AdminServer", "err", err)
		}
		closeConsole()
	}, nil
}

// ensembleView maps the server's quorum description for the AdminServer;
// nil on a standalone server.
func ensembleView(srv *server.Server) func() admin.Ensemble {
	if _, ok := srv.Quorum(); !ok {
		return nil
	}
	return func() admin.Ensemble {
		q, _ := srv.Quorum()
		e := admin.Ensemble{
			MyID: q.MyID, IsLeader: q.IsLeader, LeaderID: q.LeaderID, LeaderAddr: q.LeaderAddr,
			Voting: q.Voting, QuorumAddr: q.QuorumAddr, ClientAddr: q.ClientAddr,
			LastZxid: q.LastZxid, Term: q.Term, ObserverCount: q.ObserverCount,
		}
		for _, m := range q.Members {
			if m.ID == q.MyID {
				e.ElectionAddr = m.ElectionAddr
			}
			e.Members = append(e.Members, admin.Member{ID: m.ID, QuorumAddr: m.QuorumAddr,
				ElectionAddr: m.ElectionAddr, ClientAddr: m.ClientAddr, Observer: m.Observer})
		}
		return e
	}
}

// nullMetricsProvider is Apache's default, which exports nothing.
const nullMetricsProvider = "org.apache.zookeeper.metrics.impl.NullMetricsProvider"

// startMetrics starts the Prometheus endpoint when zoo.cfg asks for
// Apache's PrometheusMetricsProvider (metricsProvider.httpHost, httpPort,
// exportJvmInfo, with Apache's defaults 0.0.0.0, 7000, true). As in
// Apache, a provider that cannot start stops the server.
func startMetrics(log *slog.Logger, cfg *config.Config, srv *server.Server) (stop func(), err error) {
	switch cfg.MetricsProviderClassName {
	case "", nullMetricsProvider:
		return func() {}, nil
	case admin.PrometheusClassName:
	default:
		log.Warn("config: metricsProvider.className names a Java class Zoo cannot load; no metrics are exported",
			"className", cfg.MetricsProviderClassName, "at", cfg.Pos("metricsProvider.className").String(),
			"supported", admin.PrometheusClassName)
		return func() {}, nil
	}
	p := cfg.MetricsProvider
	host, port := cmp.Or(p["httpHost"], "0.0.0.0"), cmp.Or(p["httpPort"], "7000")
	runtime := p["exportJvmInfo"] != "false"
	reg := prometheus.NewRegistry()
	if err := admin.RegisterMetrics(reg, srv.Metrics(), runtime); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("metricsProvider (httpHost, httpPort): %w", err)
	}
	ms := admin.Start(ln, admin.MetricsHandler(reg), 30*time.Second)
	log.Info("Prometheus metrics serving", "url", "http://"+ln.Addr().String()+"/metrics", "exportJvmInfo", runtime)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ms.Close(ctx); err != nil {
			log.Warn("stopping the metrics endpoint", "err", err)
		}
	}, nil
}
