package server

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/server/fourlw"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// isFourLetterWord reports whether the first four bytes of a connection
// are a four-letter word rather than a frame length.
func isFourLetterWord(word string) bool { return fourlw.IsCommand(word) }

// fourLetter answers a four-letter word, or says it is not allowed.
func (s *Server) fourLetter(word string) string {
	out, _ := fourlw.Respond(word, s.whitelist, source{s})
	return out
}

// source is the server as the four-letter words see it.
type source struct{ s *Server }

func (src source) Serving() bool {
	if src.s.cfg.Ensemble.enabled() {
		return src.s.serving() || src.s.readOnly()
	}
	return src.s.rep.IsLeader()
}

// mode is the server's role as the four-letter words name it.
func (s *Server) mode() string {
	switch {
	case !s.cfg.Ensemble.enabled():
		return fourlw.ModeStandalone
	case s.readOnly():
		return fourlw.ModeReadOnly
	case s.rep.Leader() == s.rep.ID():
		return fourlw.ModeLeader
	case s.rep.IsLearner() && !s.lingering.Load():
		return fourlw.ModeObserver // a removed server lingering is a follower, as in Apache
	default:
		return fourlw.ModeFollower
	}
}

func (src source) Stats() fourlw.Stats {
	s := src.s
	st := fourlw.Stats{
		Version:       fourlw.FullVersion(s.cfg.Version, s.start),
		Mode:          s.mode(),
		ReadOnly:      s.readOnly(),
		Latency:       s.stats.lat.get(),
		Received:      s.stats.received.Load(),
		Sent:          s.stats.sent.Load(),
		Outstanding:   int64(len(s.tokens)),
		SlowFsyncs:    s.stats.slowFsyncs.Load(),
		Zxid:          s.rep.LastZxid(),
		ProposalSizes: fourlw.BufferStats{Last: -1, Min: -1, Max: -1},
	}
	s.mu.RLock()
	st.Connections = len(s.conns)
	s.mu.RUnlock()
	// Apache counts the root twice (its node map holds "" and "/"); match
	// it, since tools compare zk_znode_count across servers.
	s.rep.Read(func(state *txn.State, _ int64) { st.NodeCount = int64(state.Tree.NodeCount()) + 1 })
	return st
}

func (src source) Connections() []fourlw.Conn {
	conns := src.s.snapshotConns()
	out := make([]fourlw.Conn, 0, len(conns))
	for _, c := range conns {
		out = append(out, c.describe())
	}
	return out
}

func (c *conn) describe() fourlw.Conn {
	lat := c.st.lat.get()
	queued := int64(c.srv.reqs.inFlight(c.id))
	interest := 1
	if c.st.fourLetter.Load() {
		interest = 0
	}
	d := fourlw.Conn{
		Remote:       c.nc.RemoteAddr().String(),
		Interest:     interest,
		Queued:       queued,
		Received:     c.st.received.Load(),
		Sent:         c.st.sent.Load(),
		SessionID:    c.sessionID(),
		LastOp:       lastOpName(jute.Op(c.st.lastOp.Load())),
		Created:      c.st.established,
		Timeout:      c.timeout.Load(),
		LastCxid:     c.st.lastCxid.Load(),
		LastZxid:     c.st.lastZxid.Load(),
		LastResponse: c.st.lastReply.Load(),
		LastLatency:  c.st.lastLatency.Load(),
		MinLatency:   lat.Min,
		MaxLatency:   lat.Max,
	}
	if lat.Count > 0 {
		d.AvgLatency = lat.Total / lat.Count
	}
	return d
}

// lastOpName is the abbreviation Apache's cons shows for a connection's
// last request.
func lastOpName(op jute.Op) string {
	switch op {
	case 0:
		return "NA"
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return "CREA"
	case jute.OpDelete:
		return "DELE"
	case jute.OpExists:
		return "EXIS"
	case jute.OpGetData:
		return "GETD"
	case jute.OpSetData:
		return "SETD"
	case jute.OpGetACL:
		return "GACL"
	case jute.OpSetACL:
		return "SACL"
	case jute.OpGetChildren, jute.OpGetChildren2:
		return "GETC"
	case jute.OpSync:
		return "SYNC"
	case jute.OpPing:
		return "PING"
	case jute.OpCheck:
		return "CHEC"
	case jute.OpMulti:
		return "MULT"
	case jute.OpMultiRead:
		return "MLTR"
	case jute.OpSetWatches, jute.OpSetWatches2:
		return "SETW"
	case jute.OpCloseSession:
		return "CLOSE"
	case jute.OpCreateSession:
		return "SESS"
	}
	return op.String()
}

func (src source) Conf() fourlw.Conf {
	s := src.s
	c := fourlw.Conf{
		SecureClientPort:        -1,
		TickTime:                int(s.cfg.TickTime / time.Millisecond),
		MaxClientCnxns:          s.cfg.MaxClientCnxns,
		MinSessionTimeout:       int(s.cfg.MinSessionTimeout),
		MaxSessionTimeout:       int(s.cfg.MaxSessionTimeout),
		ClientPortListenBacklog: -1,
		ServerID:                s.cfg.ServerID,
	}
	if cfg := s.cfg.Conf; cfg != nil {
		c.ClientPort = cfg.ClientPort
		if cfg.SecureClientPort != 0 {
			c.SecureClientPort = cfg.SecureClientPort
		}
		c.DataDir = cfg.DataDir
		c.DataLogDir = cfg.DataLogDir
	}
	// Apache sizes its snapshot and log directories; Zoo keeps them in
	// dataDir/snap and dataLogDir/log.
	if s.cfg.DataDir != "" || s.cfg.DataLogDir != "" {
		c.DataDirSize = dirSize(filepath.Join(cmp.Or(s.cfg.DataDir, s.cfg.DataLogDir), "snap"))
		c.DataLogSize = dirSize(filepath.Join(s.cfg.DataLogDir, "log"))
	}
	return c
}

func (src source) DigestLog() []fourlw.ZxidDigest { return src.s.digests.get() }

func (src source) Env() []fourlw.KV {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	user := os.Getenv("USER")
	return []fourlw.KV{
		{Key: "host.name", Value: host},
		{Key: "go.version", Value: runtime.Version()},
		{Key: "os.name", Value: runtime.GOOS},
		{Key: "os.arch", Value: runtime.GOARCH},
		{Key: "user.name", Value: user},
		{Key: "user.home", Value: home},
		{Key: "user.dir", Value: wd},
		{Key: "os.memory.free", Value: mib(ms.HeapIdle)},
		{Key: "os.memory.max", Value: mib(ms.Sys)},
		{Key: "os.memory.total", Value: mib(ms.HeapSys)},
	}
}

func mib(b uint64) string { return strconv.FormatUint(b>>20, 10) + "MB" }

func (src source) Monitor() fourlw.Monitor {
	s := src.s
	m := fourlw.Monitor{
		WatchCount: int64(s.watches.Len()),
		UptimeMs:   s.cfg.Now().Sub(s.start).Milliseconds(),
		AuthFailed: s.stats.authFailed.Load(),
	}
	s.rep.Read(func(st *txn.State, _ int64) {
		m.EphemeralsCount = int64(st.Tree.EphemeralCount())
		m.ApproximateDataSize = st.Tree.ApproximateDataSize()
		m.GlobalSessions = int64(len(st.Sessions))
	})
	m.LocalSessions = s.localSessionCount()
	m.OpenFileDescriptors, m.MaxFileDescriptors = fileDescriptors()
	m.ClientResponseSize = fourlw.BufferStats{Last: -1, Min: -1, Max: -1}
	if e := s.cfg.Ensemble; e.enabled() {
		s.monitorQuorum(&m, e)
	}
	m.Extra = append(m.Extra, fourlw.MetricLines(s.metrics.set)...)
	return m
}

// monitorQuorum adds what mntr shows of the ensemble: the role, the
// members, and which peers this server has a live link to.
func (s *Server) monitorQuorum(m *fourlw.Monitor, e Ensemble) {
	m.QuorumSize = len(s.rep.Voters())
	m.PeerState = "following - broadcast"
	connected := 0
	for id := range e.Peers {
		if s.peers.Connected(id) {
			connected++
		}
	}
	switch s.mode() {
	case fourlw.ModeLeader:
		m.PeerState = "leading - broadcast"
		m.Learners, m.SyncedFollowers = connected, connected
	case fourlw.ModeObserver:
		m.PeerState = "observing - broadcast"
	}
	m.Extra = append(m.Extra,
		fourlw.KV{Key: "zoo_server_id", Value: fmt.Sprint(s.rep.ID())},
		fourlw.KV{Key: "zoo_raft_term", Value: fmt.Sprint(s.rep.Term())},
		fourlw.KV{Key: "zoo_leader_id", Value: fmt.Sprint(s.rep.Leader())},
		fourlw.KV{Key: "zoo_peers_connected", Value: fmt.Sprint(connected)})
	// The leader knows how far behind each member's log is, in entries
	// (zxids): zk_zoo_peer_<id>_lag.
	for _, p := range s.rep.Progress() {
		m.Extra = append(m.Extra, fourlw.KV{Key: fmt.Sprintf("zoo_peer_%d_lag", p.ID), Value: fmt.Sprint(p.Lag)})
	}
}

// fileDescriptors returns how many files the process has open, and may.
func fileDescriptors() (open, limit int64) {
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = int64(len(ents))
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		limit = int64(rl.Cur)
	}
	return open, limit
}

func (src source) WatchSummary() fourlw.WatchSummary {
	s := src.s.watches.Summary(watch.DataTable)
	return fourlw.WatchSummary{Connections: s.Watchers, Paths: s.Paths, Total: s.Watches}
}

func (src source) DataWatches() []fourlw.Watch {
	s := src.s
	var out []fourlw.Watch
	for _, wp := range s.watches.ByWatcher(watch.DataTable) {
		sid := int64(0)
		if c := s.conn(uint64(wp.Watcher)); c != nil {
			sid = c.sessionID()
		}
		for _, p := range wp.Paths {
			out = append(out, fourlw.Watch{SessionID: sid, Path: p})
		}
	}
	return out
}

func (src source) Dump() fourlw.Dump {
	s := src.s
	s.smu.Lock()
	buckets := s.hk.tracker.Buckets()
	sessions := s.hk.tracker.Sessions()
	s.smu.Unlock()
	d := fourlw.Dump{Ephemerals: map[int64][]string{}}
	for _, b := range buckets {
		d.SessionBuckets = append(d.SessionBuckets, fourlw.Bucket{Expires: time.UnixMilli(b.Deadline), SessionIDs: b.IDs})
	}
	s.rep.Read(func(st *txn.State, _ int64) {
		for _, se := range sessions {
			if eph := st.Tree.Ephemerals(se.ID); len(eph) > 0 {
				d.Ephemerals[se.ID] = eph
			}
		}
	})
	return d
}

func (src source) TraceMask() int64 { return src.s.traceMask.Load() }

func (src source) ResetConnectionStats() {
	for _, c := range src.s.snapshotConns() {
		c.st.reset()
	}
}

// ResetServerStats resets the statistics and, as Apache's ServerStats.reset
// does, every metric.
func (src source) ResetServerStats() {
	src.s.stats.reset()
	src.s.metrics.set.Reset()
}

// snapshotConns returns the live connections.
func (s *Server) snapshotConns() []*conn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	return out
}
