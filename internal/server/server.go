package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/audit"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/metrics"
	"github.com/zoohq/zoo/internal/peer"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/server/fourlw"
	"github.com/zoohq/zoo/internal/session"
	"github.com/zoohq/zoo/internal/shrink"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/watch"
)

// defaultTraceMask is Apache's ZooTrace default, which gtmk reports.
const defaultTraceMask = 306

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Config is what a server needs; cmd/zoo fills it from zoo.cfg.
type Config struct {
	Logger   *slog.Logger
	ServerID int64
	TickTime time.Duration
	// Session timeouts a client may negotiate, in ms.
	MinSessionTimeout int32
	MaxSessionTimeout int32
	// MaxClientCnxns limits connections per client IP; 0 is no limit.
	MaxClientCnxns int
	// MaxCnxns limits all client connections (zookeeper.maxCnxns); 0 is no
	// limit.
	MaxCnxns int
	// MaxFrame is jute.maxbuffer: the largest request frame accepted.
	MaxFrame int
	// MaxOutstanding is globalOutstandingLimit: requests read but not
	// answered, over all connections. Past it the server stops reading
	// sockets until replies go out.
	MaxOutstanding int
	// MaxOutbound bounds the bytes queued for one connection: past it
	// (watch events keep coming for a client that reads nothing) the
	// connection is closed.
	MaxOutbound int
	// OutboundPause is how many bytes of replies may wait for one
	// connection before the server stops reading its requests until the
	// client reads (backpressure); 0 is 1 MiB, and it is at most half of
	// MaxOutbound.
	OutboundPause int
	// MaxOutboundTotal bounds the bytes queued over all connections: past
	// it, every connection with replies waiting is not read until they
	// are written, while clients that read theirs are served; 0 is
	// 64 MiB.
	MaxOutboundTotal int64
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
	// HandshakeTimeout bounds how long a new connection may take to send
	// its ConnectRequest (or four-letter word); then it is closed, so
	// idle sockets cannot hold maxClientCnxns' slots. Apache's is
	// zookeeper.nio.sessionlessCnxnTimeout, 10 s by default.
	HandshakeTimeout time.Duration
	// RestAfter is the interval of the scans that rest idle readers: a
	// reader that waited on a quiet socket through a whole interval (one
	// to two of them) hands its connection to a fresh goroutine with a
	// smaller stack (rest.go); 0 is 1 s.
	RestAfter time.Duration
	// SuperDigest is "super:<digest>" for DigestAuthenticationProvider.
	SuperDigest string
	// SASL is the DIGEST-MD5 login of the JAAS Server section; nil means
	// none, and a sasl request is answered with a null token, as Apache
	// does without one.
	SASL *SASLConfig
	// EnforceAuthSchemes, when not empty, are the schemes a connection
	// must hold an id of before its requests are served
	// (enforce.auth.schemes, or sasl for sessionRequireClientSASLAuth).
	EnforceAuthSchemes []string
	// Audit, when set, receives an audit record for every write, ACL
	// change and ephemeral node removed with its session (audit.enable).
	// The caller opens and closes it.
	Audit *audit.Logger
	// ExtendedTypes enables TTL nodes (extendedTypesEnabled).
	ExtendedTypes bool
	// EnforceQuota fails requests past a hard quota with QuotaExceeded;
	// without it, and for soft limits, an overrun is only logged.
	EnforceQuota bool
	// SkipACL turns every ACL check off (skipACL=yes): each connection
	// acts as the super user.
	SkipACL bool
	// FourLetterWords lists the allowed 4lw commands; "*" allows all.
	FourLetterWords []string
	// ReadOnlyMode lets a member cut off from the quorum serve reads to
	// canBeReadOnly clients (-Dreadonlymode.enabled=true); it also
	// enables isro, as in Apache.
	ReadOnlyMode bool
	// LocalSessions (localSessionsEnabled) lets a read-only member give
	// new sessions as local sessions; without it it refuses them.
	LocalSessions bool
	// ContainerCheck is znode.container.checkIntervalMs.
	ContainerCheck time.Duration
	// ContainerMaxPerMinute is znode.container.maxPerMinute.
	ContainerMaxPerMinute int
	// Version is the ZooKeeper version reported to clients (envi, srvr),
	// e.g. "3.9.2-zoo-0.1.0": clients parse its leading digits.
	Version string
	// Conf is the configuration the conf four-letter word shows.
	Conf *config.Config
	// Now is the wall clock (ms); tests replace it.
	Now func() time.Time

	// DataLogDir holds the log (under "log") and DataDir the snapshots
	// (under "snap"); DataLogDir empty means DataDir. Both empty: the
	// state is kept in memory only and a restart loses it.
	DataDir    string
	DataLogDir string
	// SnapCount is how many txns separate snapshots (snapCount); 0 is
	// Apache's default, 100000.
	SnapCount int
	// FsyncWarningThreshold is fsync.warningthresholdms: a log write (its
	// write and fsync) that takes longer, in whole milliseconds, is logged
	// and counted.
	// 0 means Apache's 1 s; negative, 0 ms (every fsync of 1 ms or more).
	FsyncWarningThreshold time.Duration
	// SnapSizeLimit is snapSizeLimitInKb in bytes: the log after which
	// a snapshot is taken whatever the count; 0 is Apache's 4 GiB, and
	// negative none.
	SnapSizeLimit int64
	// CommitLogCount is how many applied txns the leader keeps in memory
	// behind its snapshot, for followers that lag by fewer (commitLogCount);
	// 0 is replica.DefaultTrailingEntries.
	CommitLogCount int
	// CommitLogBytes bounds what the leader keeps in memory beyond
	// CommitLogCount for followers that lag further
	// (replica.Config.RetainBytes); 0 is replica.DefaultRetainBytes,
	// negative keeps nothing more.
	CommitLogBytes int64
	// SnapRetainCount is how many snapshots are kept
	// (autopurge.snapRetainCount, at least 3).
	SnapRetainCount int
	// PurgeInterval is how often old snapshots and log are removed
	// (autopurge.purgeInterval); 0 purges after every snapshot.
	PurgeInterval time.Duration
	// NoSync skips the log's fsyncs (forceSync=no).
	NoSync bool
	// PreAllocSize is the log segments' size (preAllocSize); 0 is 64 MiB.
	PreAllocSize int64
	// SnapCompression compresses snapshots (snapshot.compression.method).
	SnapCompression snap.Compression
	// FS is the file system of the data directories; nil is the OS's.
	FS vfs.FS
	// ReconfigEnabled allows the reconfig operation (reconfigEnabled); it
	// takes the super user, or WRITE on /zookeeper/config.
	ReconfigEnabled bool
	// OneParticipant lets a reconfig leave a single participant
	// (standaloneEnabled=false), as Apache does.
	OneParticipant bool
	// Ensemble names the servers this one replicates with; the zero
	// value runs standalone.
	Ensemble Ensemble
	// Metrics receives the server's metrics (Apache's names); nil makes
	// a set of its own. Server.Metrics returns it either way.
	Metrics *metrics.Set
}

func (c *Config) ensureDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ServerID == 0 {
		c.ServerID = 1
	}
	if c.TickTime == 0 {
		c.TickTime = 2 * time.Second
	}
	tick := int32(c.TickTime / time.Millisecond)
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = 2 * tick
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 20 * tick
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = jute.DefaultMaxBuffer
	}
	if c.MaxOutstanding == 0 {
		c.MaxOutstanding = 1000
	}
	if c.MaxOutbound == 0 {
		c.MaxOutbound = 64 << 20
	}
	if c.OutboundPause == 0 {
		c.OutboundPause = 1 << 20
	}
	c.OutboundPause = min(c.OutboundPause, c.MaxOutbound/2)
	if c.MaxOutboundTotal == 0 {
		c.MaxOutboundTotal = 64 << 20
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.RestAfter == 0 {
		c.RestAfter = time.Second
	}
	if c.ContainerCheck == 0 {
		c.ContainerCheck = time.Minute
	}
	if c.ContainerMaxPerMinute == 0 {
		c.ContainerMaxPerMinute = 10000
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.DataLogDir == "" {
		c.DataLogDir = c.DataDir
	}
}

// OutboundBytes returns the bytes of replies and events queued for clients,
// or being written to them, over all connections.
func (s *Server) OutboundBytes() int64 { return s.outbound.Load() }

// Server serves ZooKeeper clients.
type Server struct {
	cfg       Config
	log       *slog.Logger
	rep       *replica.Replica
	watches   *watch.Registry
	tokens    chan struct{} // the global outstanding limit, as a semaphore
	outbound  atomic.Int64  // bytes queued for clients over all connections
	catchup   catchupStats  // snapshots installed from the leader (catchup.go)
	whitelist fourlw.Whitelist
	stats     *counters
	metrics   *serverMetrics
	digests   digestLog
	start     time.Time

	// maxReadsBehind bounds the reads of one connection waiting behind
	// its writes: at least one, at most what MaxOutbound holds of the
	// largest replies (conn.waitReadsBehind).
	maxReadsBehind int
	// rests counts the readers that handed their connection over, to the
	// idle poller or to a fresh goroutine (rest.go).
	rests atomic.Uint64
	// idle holds resting readers without goroutines, where it can.
	idle idlePoller

	mu       sync.RWMutex
	conns    map[uint64]*conn // by id, which is also the watcher id
	bySess   map[int64]*conn  // the connection each session is attached to
	perIP    map[netip.Addr]int
	closing  bool
	lns      []net.Listener
	nextConn uint64
	// The peak sizes of conns and bySess: Go maps never shrink, so they
	// are rebuilt when they empty (shrink.Map; issue 17).
	connsPeak, bySessPeak int

	reqs *registry // requests waiting for the log or for earlier writes
	core *Core     // the request path over reqs and watches (core.go)

	smu sync.Mutex   // hk and ids, leaf structures
	hk  *Housekeeper // session expiry and activity (housekeeper.go)
	ids *session.IDGen

	peers     *peer.Transport                 // in an ensemble; else nil
	peerAddrs map[uint64]string               // the peers' addresses; the replica's loop owns it
	listed    map[uint64]bool                 // the peers the last membership listed; likewise
	running   atomic.Pointer[replica.Replica] // rep, for the peer transport's goroutines
	removed   atomic.Bool                     // a reconfig took this server out of the membership, and raft dropped it
	lingering atomic.Bool                     // a reconfig removed it; raft still replicates to it (a non-voting follower)
	ro        readOnlyState                   // read-only mode (readonly.go)

	traceMask atomic.Int64 // of the gtmk and stmk four-letter words
	wg        sync.WaitGroup
	quit      chan struct{}
	writerc   chan *conn      // hands a connection to a writer waiting for work (writers.go)
	writers   atomic.Int64    // writer goroutines started (writers.go)
	bursts    atomic.Int64    // bursts of replies handed to a writer (writers.go)
	recovered atomic.Bool     // the start loaded a snapshot or replayed a log (housekeeping.go)
	freer     *memFreer       // returns free memory to the OS (housekeeping.go)
	baseCtx   context.Context // cancelled by Shutdown
	cancel    context.CancelFunc
	once      sync.Once
}

// New assembles a standalone server: a one-voter raft group over a fresh
// tree or, with a data directory, over the state recovered from it. Every
// recovered session gets a full timeout from now to reconnect, as after an
// Apache restart.
func New(cfg Config) (*Server, error) {
	cfg.ensureDefaults()
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		watches:   new(watch.Registry),
		tokens:    make(chan struct{}, cfg.MaxOutstanding),
		whitelist: fourlw.NewWhitelist(fourLetterWords(cfg)),
		stats:     newCounters(),
		metrics:   newServerMetrics(cfg.Metrics),
		start:     cfg.Now(),
		conns:     make(map[uint64]*conn),
		bySess:    make(map[int64]*conn),
		perIP:     make(map[netip.Addr]int),
		reqs:      newRegistry(),
		quit:      make(chan struct{}),
		writerc:   make(chan *conn),
		freer:     newMemFreer(debug.FreeOSMemory),
	}
	s.maxReadsBehind = max(1, cfg.MaxOutbound/cfg.MaxFrame)
	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	s.core = s.newCore()
	s.traceMask.Store(defaultTraceMask)
	now := s.nowMs()
	s.hk = NewHousekeeper(cfg.TickTime.Milliseconds(), cfg.Ensemble.enabled(), now)
	s.ids = session.NewIDGen(cfg.ServerID, now)
	state := txn.NewState(tree.New())
	prep := txn.NewPrepper(state, txn.PrepConfig{
		ReconfigEnabled: cfg.ReconfigEnabled,
		OneParticipant:  cfg.OneParticipant,
		ExtendedTypes:   cfg.ExtendedTypes,
		EnforceQuota:    cfg.EnforceQuota,
		QuotaWarning:    s.quotaWarning,
	})
	rcfg := replica.Config{
		ID:              uint64(cfg.ServerID),
		Logger:          cfg.Logger,
		State:           state,
		Prep:            prep,
		OnApply:         s.onApply,
		Now:             s.nowMs,
		FS:              cfg.FS,
		SnapCount:       cfg.SnapCount,
		SnapSizeLimit:   cfg.SnapSizeLimit,
		TrailingEntries: cfg.CommitLogCount,
		RetainBytes:     cfg.CommitLogBytes,
		SnapRetain:      cfg.SnapRetainCount,
		PurgeInterval:   cfg.PurgeInterval,
		NoSync:          cfg.NoSync,
		SegmentSize:     cfg.PreAllocSize,
		SnapCompression: cfg.SnapCompression,
		OnPersist:       s.onPersist,
		OnSnapshot:      s.onSnapshot,
		OnRecover:       s.onRecover,
	}
	if cfg.DataLogDir != "" {
		rcfg.Dir = filepath.Join(cfg.DataLogDir, "log")
		rcfg.SnapDir = filepath.Join(cmp.Or(cfg.DataDir, cfg.DataLogDir), "snap")
	}
	if e := cfg.Ensemble; e.enabled() {
		peers, err := s.newPeers(e, !replica.Fresh(rcfg))
		if err != nil {
			return nil, err
		}
		s.peers = peers
		rcfg.Voters, rcfg.Learners = e.Voters, e.Learners
		// A fresh log's first snapshot holds the membership; a
		// recovered state replaces this.
		if _, err := state.Tree.SetData(tree.ConfigPath, []byte(e.Membership), -1, 0, 0); err != nil {
			return nil, err
		}
		rcfg.Transport = peerLink{peers}
		rcfg.OnActivity = s.onActivity
		rcfg.Tick = raftTick(cfg.TickTime)
		rcfg.ElectionTicks = electionTicks(cfg.TickTime)
		if replica.Fresh(rcfg) {
			rcfg.Join = s.join(peers, len(e.Peers))
		}
	}
	rep, err := replica.New(rcfg)
	if err != nil {
		if s.peers != nil {
			s.peers.Close()
		}
		return nil, err
	}
	s.rep = rep
	s.running.Store(rep)
	s.registerGauges()
	if cfg.Ensemble.enabled() {
		s.peerAddrs = maps.Clone(cfg.Ensemble.Peers)
		s.listed = make(map[uint64]bool, len(cfg.Ensemble.Peers))
		for id := range cfg.Ensemble.Peers {
			s.listed[id] = true
		}
		prep.SetReconfig(rep)
		// The recovered membership wins over zoo.cfg's, which a reconfig
		// may have outdated (Apache rewrites zoo.cfg for this; Zoo keeps
		// the membership in the log).
		var membership []byte
		rep.Read(func(st *txn.State, _ int64) {
			membership, _, _ = st.Tree.Get(tree.ConfigPath)
		})
		s.reconfigured(membership)
	}
	// Every recovered session is due one timeout from now, once the log
	// is replayed (which may take a while): its client may reconnect
	// until then.
	ready := s.nowMs()
	rep.Read(func(st *txn.State, _ int64) { s.hk.Track(st.Sessions, ready) })
	s.goroutine(rep.Run)
	if s.peers != nil {
		s.peers.Start()
	}
	s.goroutine(s.housekeeping)
	return s, nil
}

func (s *Server) nowMs() int64 { return s.cfg.Now().UnixMilli() }

// goroutine starts f as a tracked goroutine; Shutdown waits for it.
func (s *Server) goroutine(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Serve accepts connections on ln until Shutdown. It always returns a
// non-nil error: ErrServerClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, nil) }

// serve accepts on ln; sec is the listener's TLS, nil for plaintext.
func (s *Server) serve(ln net.Listener, sec *Secure) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
				return ErrServerClosed
			default:
			}
			if retryable(err) {
				backoff = nextBackoff(backoff)
				s.log.Warn("accept", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-s.quit:
					return ErrServerClosed
				}
			}
			return err
		}
		backoff = 0
		s.accept(nc, sec)
	}
}

// retryable reports whether an accept error is worth a retry after a
// pause: running out of file descriptors, or a connection reset before it
// was accepted. Anything else means the listener is gone.
func retryable(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 5 * time.Millisecond
	}
	if d *= 2; d > time.Second {
		d = time.Second
	}
	return d
}

// accept registers a new connection and starts its goroutines, unless the
// client's address is over maxClientCnxns.
func (s *Server) accept(nc net.Conn, sec *Secure) {
	ip := remoteIP(nc)
	s.mu.Lock()
	s.metrics.connRequests.Inc()
	if refusal := s.refuse(ip); refusal != "" || s.closing || !s.serving() && !s.readOnly() {
		s.mu.Unlock()
		if refusal != "" {
			s.metrics.connRejected.Inc()
			s.log.Warn(refusal, "ip", ip)
		}
		nc.Close()
		return
	}
	s.nextConn++
	c := newConn(s, s.nextConn, nc, ip)
	c.sec = sec
	s.conns[c.id] = c
	s.perIP[ip]++
	s.mu.Unlock()
	s.stats.connections.Add(1)
	s.goroutine(c.serve)
}

// refuse says why a new connection from ip is over a limit, or "". The
// caller holds s.mu.
func (s *Server) refuse(ip netip.Addr) string {
	switch {
	case s.cfg.MaxClientCnxns > 0 && s.perIP[ip] >= s.cfg.MaxClientCnxns:
		return "too many connections from one client (maxClientCnxns); closing"
	case s.cfg.MaxCnxns > 0 && len(s.conns) >= s.cfg.MaxCnxns:
		return "too many connections (maxCnxns); closing"
	}
	return ""
}

func remoteIP(nc net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(nc.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// removeConn forgets a closed connection: its watches, its slot under
// maxClientCnxns, and its session's attachment (the session itself lives
// on until it expires or the client reattaches elsewhere).
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.conns = shrink.Map(s.conns, &s.connsPeak)
	if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
		delete(s.perIP, c.ip)
	}
	if sid := c.sessionID(); sid != 0 && s.bySess[sid] == c {
		s.forgetSessionConn(sid)
	}
	s.mu.Unlock()
	s.watches.RemoveWatcher(watch.Watcher(c.id))
}

// conn returns the live connection with the given id.
func (s *Server) conn(id uint64) *conn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.conns[id]
}

// Failed is closed when the server's replica has stopped: at Shutdown, or
// on its own after a fatal storage error (a log write or fsync failed),
// which Err reports. After that no write can succeed.
func (s *Server) Failed() <-chan struct{} { return s.rep.Done() }

// Err returns the fatal error that stopped the replica, or nil.
func (s *Server) Err() error { return s.rep.Err() }

// Addr returns the address of the first listener, once Serve has started.
func (s *Server) Addr() net.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].Addr()
}

// Shutdown stops accepting, closes every connection, stops the replica and
// waits for every goroutine, or for ctx. Sessions are not closed: like a
// crashed server, a stopped one leaves them to expire (or, once the log is
// durable, to be resumed). Shutdown is idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closing = true
		lns := s.lns
		conns := make([]*conn, 0, len(s.conns))
		for _, c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		close(s.quit)
		s.idle.stop()
		s.cancel()
		for _, ln := range lns {
			ln.Close()
		}
		for _, c := range conns {
			c.close()
		}
		s.rep.Stop()
		s.failLeft()
		if s.peers != nil {
			s.peers.Close()
		}
	})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failLeft fails the requests still waiting for the log once the replica
// has stopped: it reported every request it had taken as Dropped, so
// these were lost between their submit and its stop.
func (s *Server) failLeft() {
	for _, req := range s.reqs.takeAll() {
		req.fail(ErrServerClosed)
	}
}
