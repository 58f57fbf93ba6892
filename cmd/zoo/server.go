package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/snap"
)

func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file until the server stops")
	bk := backupFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: parseLevel(*level)}))
	var cfg *config.Config
	switch fs.NArg() {
	case 0:
		cfg = config.Default()
	case 1:
		var err error
		if cfg, err = config.Load(fs.Arg(0)); err != nil {
			return err
		}
	default:
		return errors.New("usage: zoo server [zoo.cfg]")
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w.String())
	}
	warnNotInEffect(log, cfg)
	if !cfg.ForceSync {
		log.Warn("config: forceSync=no: the log is not fsynced, so a machine failure can lose acknowledged writes")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	stopBackup, err := bk.start(log, cfg)
	if err != nil {
		return err
	}
	defer stopBackup()
	return serve(log, cfg)
}

func serve(log *slog.Logger, cfg *config.Config) error {
	scfg := serverConfig(log, cfg)
	if cfg.Distributed() {
		e, err := ensemble(log, cfg)
		if err != nil {
			return err
		}
		scfg.Ensemble = e
	}
	ln, err := net.Listen("tcp", cfg.ClientAddr())
	if err != nil {
		if scfg.Ensemble.Listener != nil {
			scfg.Ensemble.Listener.Close()
		}
		return err
	}
	srv, err := server.New(scfg)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "version", Version)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigc)
	// SIGQUIT dumps every goroutine's stack and the server goes on, as
	// the JVM prints a thread dump: operators expect kill -3 (and jcmd,
	// which attaches with it) not to take the server down.
	quitc := make(chan os.Signal, 1)
	signal.Notify(quitc, syscall.SIGQUIT)
	defer signal.Stop(quitc)
	var fatal error
wait:
	for {
		select {
		case <-quitc:
			log.Info("SIGQUIT: writing goroutine stacks to standard error")
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		case sig := <-sigc:
			log.Info("shutting down", "signal", sig.String())
			break wait
		case err := <-errc:
			log.Error("serve", "err", err)
			break wait
		case <-srv.Failed():
			// The log cannot be trusted: stop rather than serve on it.
			fatal = srv.Err()
			log.Error("storage failed; stopping", "err", fatal)
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if fatal != nil {
		return fatal
	}
	log.Info("stopped")
	return nil
}

// notInEffect are zoo.cfg keys Zoo reads but does not act on yet; setting
// one draws a warning at start-up instead of being silently ignored.
var notInEffect = []struct{ key, why string }{
	{"admin.enableServer", "there is no AdminServer yet"},
	{"admin.serverPort", "there is no AdminServer yet"},
	{"admin.serverAddress", "there is no AdminServer yet"},
	{"clientPortListenBacklog", "the listen backlog is the operating system's"},
	{"reconfigEnabled", "reconfig is not implemented yet"},
	{"metricsProvider.className", "there is no metrics provider yet"},
}

func warnNotInEffect(log *slog.Logger, cfg *config.Config) {
	for _, k := range notInEffect {
		if k.key == "admin.enableServer" && !cfg.AdminEnableServer {
			continue // asks for no server: nothing is missing
		}
		if pos := cfg.Pos(k.key); pos.Line > 0 {
			log.Warn("config: setting has no effect yet", "key", k.key, "at", pos.String(), "why", k.why)
		}
	}
}

// ensemble maps the server.N lines and myid onto the members this server
// replicates with, and binds its quorum port. The election port is not
// used: raft elects over the quorum port's connections.
func ensemble(log *slog.Logger, cfg *config.Config) (server.Ensemble, error) {
	self, ok := cfg.Self()
	if !ok {
		return server.Ensemble{}, fmt.Errorf("myid %d (in %s) names no server.N line", cfg.MyID, cfg.DataDir)
	}
	e := server.Ensemble{Peers: map[uint64]string{}, Membership: cfg.Membership()}
	for _, s := range cfg.Servers {
		if s.Type == config.Observer {
			e.Learners = append(e.Learners, uint64(s.ID))
		} else {
			e.Voters = append(e.Voters, uint64(s.ID))
		}
		if s.ID != self.ID {
			e.Peers[uint64(s.ID)] = net.JoinHostPort(s.Host, strconv.Itoa(s.QuorumPort))
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(self.Host, strconv.Itoa(self.QuorumPort)))
	if err != nil {
		return server.Ensemble{}, fmt.Errorf("quorum port of server.%d: %w", self.ID, err)
	}
	e.Listener = ln
	log.Info("ensemble member", "id", self.ID, "role", self.Type, "quorum", ln.Addr().String(),
		"voters", e.Voters, "observers", e.Learners)
	return e, nil
}

// serverConfig maps zoo.cfg onto the server's settings.
func serverConfig(log *slog.Logger, c *config.Config) server.Config {
	id := c.MyID
	if id == 0 {
		id = 1
	}
	return server.Config{
		Logger:                log,
		ServerID:              id,
		TickTime:              time.Duration(c.TickTime) * time.Millisecond,
		MinSessionTimeout:     int32(c.MinSessionTimeout),
		MaxSessionTimeout:     int32(c.MaxSessionTimeout),
		MaxClientCnxns:        c.MaxClientCnxns,
		MaxCnxns:              c.MaxCnxns,
		MaxFrame:              c.JuteMaxBuffer,
		MaxOutstanding:        c.GlobalOutstandingLimit,
		SuperDigest:           c.SuperDigest,
		ExtendedTypes:         c.ExtendedTypesEnabled,
		EnforceQuota:          c.EnforceQuota,
		SkipACL:               c.SkipACL,
		ReconfigEnabled:       c.ReconfigEnabled,
		FourLetterWords:       c.FourLetterWords,
		ContainerCheck:        time.Duration(c.ContainerCheckInterval) * time.Millisecond,
		ContainerMaxPerMinute: c.ContainerMaxPerMinute,
		Version:               zookeeperVersion + "-zoo-" + Version,
		Conf:                  c,
		DataDir:               c.DataDir,
		DataLogDir:            c.DataLogDir,
		SnapCount:             c.SnapCount,
		CommitLogCount:        c.CommitLogCount,
		SnapRetainCount:       c.SnapRetainCount,
		PurgeInterval:         time.Duration(max(c.PurgeInterval, 0)) * time.Hour,
		NoSync:                !c.ForceSync,
		PreAllocSize:          c.PreAllocSizeKB << 10,
		SnapCompression:       snapCompression(log, c.SnapshotCompression),
	}
}

// startCPUProfile profiles the process into path; the returned function
// stops the profile and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// snapCompression maps snapshot.compression.method: "gz" is gzip and
// "snappy" a Snappy framed stream, as in Apache. config already turns an
// unknown method into "" with a warning; one that gets here anyway is
// warned about too rather than silently written plain.
func snapCompression(log *slog.Logger, method string) snap.Compression {
	switch method {
	case "":
		return snap.CompressNone
	case "gz":
		return snap.CompressGzip
	case "snappy":
		return snap.CompressSnappy
	}
	log.Warn("config: unknown snapshot.compression.method; snapshots are written uncompressed", "method", method)
	return snap.CompressNone
}

func parseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}
