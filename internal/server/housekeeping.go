package server

import (
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// housekeeping expires sessions and removes empty containers and expired
// TTL nodes, each as a txn through the log like any other change. It runs
// until Shutdown.
func (s *Server) housekeeping() {
	expiry := time.NewTimer(s.cfg.TickTime)
	defer expiry.Stop()
	containers := time.NewTicker(s.cfg.ContainerCheck)
	defer containers.Stop()
	rest := time.NewTicker(s.cfg.RestAfter)
	defer rest.Stop()
	var release memRelease
	// The forced collection takes seconds on a large tree: it runs on a
	// goroutine of its own, so that session expiry never waits for it.
	freer := s.freer
	s.goroutine(func() { freer.run(s.quit) })
	if s.recovered.Load() {
		freer.ask() // what the start decoded (afterRecovery)
	}
	for {
		select {
		case <-s.quit:
			return
		case <-expiry.C:
			expiry.Reset(s.expireSessions())
			s.mu.RLock()
			n := len(s.conns)
			s.mu.RUnlock()
			if release.due(n, time.Now()) {
				s.log.Debug("a wave of connections closed: returning free memory to the OS", "connections", n)
				freer.ask()
			}
		case <-containers.C:
			s.cleanContainers()
		case <-rest.C:
			s.nudgeIdle()
		}
	}
}

// cleanContainers deletes, through the log, containers whose last child
// is gone and TTL nodes past their time, at most ContainerMaxPerMinute per
// minute as Apache's ContainerManager does.
func (s *Server) cleanContainers() {
	if s.cfg.Ensemble.enabled() && !s.rep.IsLeader() {
		return // the leader does it for everyone
	}
	limit := int(int64(s.cfg.ContainerMaxPerMinute) * int64(s.cfg.ContainerCheck) / int64(time.Minute))
	var paths []string
	now := s.nowMs()
	s.rep.Read(func(st *txn.State, _ int64) { paths = Cleanup(st, now, max(limit, 1)) })
	for _, p := range paths {
		req := txn.Request{Op: jute.OpDeleteContainer, Record: &jute.PathRequest{Path: p}}
		if err := s.rep.Submit(s.baseCtx, req, 0); err != nil {
			return
		}
	}
}

// quotaWarning logs a write that takes a subtree past its quota, as
// Apache logs "Quota exceeded". It runs on the replica's loop.
func (s *Server) quotaWarning(o tree.QuotaOverrun) {
	what := "bytes"
	if o.Count {
		what = "count"
	}
	s.log.Warn("quota exceeded", "quota", o.Prefix, "limit", what, "value", o.Value, "allowed", o.Limit, "hard", o.Hard)
}

// A wave of connections that closes leaves their memory (buffers, tables,
// 4 KiB goroutine stacks) free in the Go heap, where the runtime keeps it:
// an idle server allocates too little to start a collection for two
// minutes, and the scavenger then returns pages at about 1 MB/s and only
// down to twice the live heap. Measured with 10,000 sessions: RSS stayed
// at 114 MB for the two minutes after they closed, against 17 MB before
// they came (issue 17). So once per wave, not per close, housekeeping
// hands the free memory back with one debug.FreeOSMemory (a collection
// and a scavenge, ~0.1 s of CPU at that size).
const (
	releaseMinDrop = 1024             // connections gone since the peak
	releaseEvery   = 30 * time.Second // at most this often
)

// afterRecovery: a start that loaded a snapshot and replayed the log
// leaves what it decoded free in the heap: the snapshot's read buffers
// and every log entry after it, which raft applied and the WAL's storage
// then let go (TrailingEntries). With 1M znodes that is tens of MB, which
// the scavenger would return over minutes while RSS stays at the start's
// peak. So the start's free memory goes back at once, as a wave's does:
// off the serving path, on the freer's goroutine.

// memRelease decides when a wave of closed connections is worth giving
// memory back for: the count fell by releaseMinDrop and to half its peak
// since the last release, and has stopped falling (the wave is over). It
// belongs to the housekeeping goroutine.
type memRelease struct {
	peak, prev int
	last       time.Time
}

func (m *memRelease) due(conns int, now time.Time) bool {
	falling := conns < m.prev
	m.prev = conns
	m.peak = max(m.peak, conns)
	if falling || m.peak-conns < releaseMinDrop || conns > m.peak/2 || now.Sub(m.last) < releaseEvery {
		return false
	}
	m.peak, m.last = conns, now
	return true
}

// memFreer runs free (debug.FreeOSMemory) on its own goroutine when asked.
// Asking never blocks: while a release runs, one more ask is kept and any
// beyond it are the same request.
type memFreer struct {
	free  func()
	asked chan struct{} // capacity 1
	freed atomic.Int64  // releases done
}

func newMemFreer(free func()) *memFreer {
	return &memFreer{free: free, asked: make(chan struct{}, 1)}
}

func (m *memFreer) ask() {
	select {
	case m.asked <- struct{}{}:
	default:
	}
}

// run frees memory each time it is asked, until quit closes.
func (m *memFreer) run(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case <-m.asked:
			m.free()
			m.freed.Add(1)
		}
	}
}
