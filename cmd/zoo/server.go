package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/snap"
)

// serverUsage heads "zoo server -h".
const serverUsage = `usage: zoo server [flags] [zoo.cfg]

Runs a server configured by zoo.cfg (Apache ZooKeeper's format). With no
file, a standalone server on 127.0.0.1:2181 with its data in ./zoo-data and
its AdminServer on 127.0.0.1:8080.

flags:
`

func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serverUsage)
		fs.PrintDefaults()
	}
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	format := fs.String("log-format", "text", "log format: text (key=value) or json (one object a line)")
	logFile := fs.String("log-file", "", "append the log to this `file` instead of standard error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file until the server stops")
	bk := backupFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h asked for the usage: not an error
		}
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log, closeLog, err := newLogger(*format, *logFile, parseLevel(*level))
	if err != nil {
		return err
	}
	defer closeLog()
	var cfg *config.Config
	var errs []error
	switch fs.NArg() {
	case 0:
		cfg = config.Default()
	case 1:
		var err error
		if cfg, err = config.Load(fs.Arg(0)); cfg == nil {
			return err
		}
		errs = append(errs, err)
	default:
		return errors.New("usage: zoo server [zoo.cfg]")
	}
	// Settings also come from -D flags, as zkServer.sh passes them.
	for _, v := range config.JVMFlagVars {
		errs = append(errs, cfg.ApplyJVMFlags(v, os.Getenv(v)))
	}
	if err := config.Join(errs...); err != nil {
		return err
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
	logDataDirs(log, cfg)
	// Before the state loads: the load then runs at the lower GOGC too.
	// Starting after it was tried: the load's CPU was the same (it makes
	// almost no garbage) and RSS after it 5-8% higher.
	stopGC := startGC(log, cfg, os.Getenv)
	defer stopGC()
	stopProcs := startProcs(log, os.Getenv)
	defer stopProcs()
	stopBackup, err := bk.start(log, cfg)
	if err != nil {
		return err
	}
	defer stopBackup()
	return serve(log, cfg)
}

func serve(log *slog.Logger, cfg *config.Config) error {
	st, sec, err := clientTLS(log, cfg)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	scfg := serverConfig(log, cfg)
	if err := saslServerConfig(log, cfg, &scfg); err != nil {
		return err
	}
	al, closeAudit, err := openAudit(log, cfg)
	if err != nil {
		return err
	}
	defer closeAudit()
	scfg.Audit = al
	if cfg.Distributed() {
		e, stopReload, err := ensemble(log, cfg)
		if err != nil {
			return err
		}
		defer stopReload()
		scfg.Ensemble = e
	}
	lns, err := listenClients(cfg, sec)
	if err != nil {
		if scfg.Ensemble.Listener != nil {
			scfg.Ensemble.Listener.Close()
		}
		return err
	}
	srv, err := server.New(scfg)
	if err != nil {
		for _, l := range lns {
			l.ln.Close()
		}
		return err
	}
	// abort undoes a start that fails before the clients are served: the
	// server stops, and its listeners, not served yet, are closed here
	// since Shutdown does not know them.
	abort := func(err error) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		for _, l := range lns {
			l.ln.Close()
		}
		return err
	}
	stopAdmin, err := startAdmin(log, cfg, srv)
	if err != nil {
		return abort(err)
	}
	defer stopAdmin()
	stopMetrics, err := startMetrics(log, cfg, srv)
	if err != nil {
		return abort(err)
	}
	defer stopMetrics()
	errc := make(chan error, len(lns))
	for _, l := range lns {
		log.Info("serving", "addr", l.ln.Addr().String(), "tls", l.sec != nil && !l.sec.Unified,
			"unified", l.sec != nil && l.sec.Unified, "version", Version)
		go func() {
			if l.sec != nil {
				errc <- srv.ServeTLS(l.ln, l.sec)
			} else {
				errc <- srv.Serve(l.ln)
			}
		}()
	}
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
	{"clientPortListenBacklog", "the listen backlog is the operating system's"},
}

func warnNotInEffect(log *slog.Logger, cfg *config.Config) {
	for _, k := range notInEffect {
		if pos := cfg.Pos(k.key); pos.Line > 0 {
			log.Warn("config: setting has no effect yet", "key", k.key, "at", pos.String(), "why", k.why)
		}
	}
}

// ensemble maps the server.N lines and myid onto the members this server
// replicates with, and binds its quorum port. The election port is not
// used: raft elects over the quorum port's connections.
//
// The returned function stops the reloading of the quorum's stores
// (sslQuorumReloadCertFiles); call it once the server has stopped.
func ensemble(log *slog.Logger, cfg *config.Config) (server.Ensemble, func(), error) {
	self, ok := cfg.Self()
	if !ok {
		return server.Ensemble{}, nil, fmt.Errorf("myid %d (in %s) names no server.N line", cfg.MyID, cfg.DataDir)
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
	q, err := quorumTLS(log, cfg)
	if err != nil {
		return server.Ensemble{}, nil, err
	}
	stop := func() {}
	if q != nil {
		stop = q.Close
	}
	if e.Auth, err = quorumSASL(log, cfg); err != nil {
		stop()
		return server.Ensemble{}, nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(self.Host, strconv.Itoa(self.QuorumPort)))
	if err != nil {
		stop()
		return server.Ensemble{}, nil, fmt.Errorf("quorum port of server.%d: %w", self.ID, err)
	}
	e.Listener, e.Dial = quorumListener(log, cfg, q, ln)
	checkHosts(log, cfg)
	log.Info("ensemble member", "id", self.ID, "role", self.Type, "quorum", ln.Addr().String(),
		"voters", e.Voters, "observers", e.Learners)
	return e, stop, nil
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
		OneParticipant:        !c.StandaloneEnabled,
		FourLetterWords:       c.FourLetterWords,
		ReadOnlyMode:          c.ReadOnlyMode,
		LocalSessions:         c.LocalSessionsEnabled,
		ContainerCheck:        time.Duration(c.ContainerCheckInterval) * time.Millisecond,
		ContainerMaxPerMinute: c.ContainerMaxPerMinute,
		Version:               zookeeperVersion + "-zoo-" + Version,
		Conf:                  c,
		DataDir:               c.DataDir,
		DataLogDir:            c.DataLogDir,
		SnapCount:             c.SnapCount,
		SnapSizeLimit:         snapSizeLimit(c.SnapSizeLimitKB),
		CommitLogCount:        c.CommitLogCount,
		SnapRetainCount:       c.SnapRetainCount,
		PurgeInterval:         time.Duration(max(c.PurgeInterval, 0)) * time.Hour,
		NoSync:                !c.ForceSync,
		PreAllocSize:          c.PreAllocSizeKB << 10,
		FsyncWarningThreshold: fsyncWarningThreshold(c.FsyncWarningThresholdMs),
		SnapCompression:       snapCompression(log, c.SnapshotCompression),
	}
}

// fsyncWarningThreshold maps fsync.warningthresholdms to the server's
// setting, where 0 means the default.
func fsyncWarningThreshold(ms int64) time.Duration {
	if ms == 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
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

// newLogger builds the server's logger: text or JSON, to standard error
// or appended to a file.
func newLogger(format, file string, level slog.Level) (*slog.Logger, func(), error) {
	var w io.Writer = os.Stderr
	closeLog := func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("-log-file: %w", err)
		}
		w, closeLog = f, func() { f.Close() }
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), closeLog, nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), closeLog, nil
	}
	closeLog()
	return nil, nil, fmt.Errorf("-log-format %q: want text or json", format)
}

// logDataDirs says where the data lives, so that a first run shows where
// to look (and what to back up).
func logDataDirs(log *slog.Logger, cfg *config.Config) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	log.Info("data", "snapshots", filepath.Join(abs(cfg.DataDir), "snap"),
		"log", filepath.Join(abs(cmp.Or(cfg.DataLogDir, cfg.DataDir)), "log"),
		"config", cfg.Pos("").File)
}

// checkHosts warns, once at start-up, about server.N hosts that do not
// resolve: a typo there otherwise shows only as a member that never
// connects (the peer transport then logs its dial failures, rate-limited).
func checkHosts(log *slog.Logger, cfg *config.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range cfg.Servers {
		if _, err := net.DefaultResolver.LookupHost(ctx, s.Host); err != nil {
			log.Warn("config: a server.N host does not resolve", "server", s.ID, "host", s.Host,
				"at", cfg.Pos(fmt.Sprintf("server.%d", s.ID)).String(), "err", err)
		}
	}
}

// snapSizeLimit is snapSizeLimitInKb in bytes, negative when turned off.
func snapSizeLimit(kb int64) int64 {
	if kb <= 0 {
		return -1
	}
	return kb << 10
}
