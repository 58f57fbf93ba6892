package server

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/zoohq/zoo/internal/metrics"
	"github.com/zoohq/zoo/internal/server/fourlw"
	"github.com/zoohq/zoo/internal/txn"
)

// serverMetrics are the metrics the server records, under Apache's names
// (ServerMetrics) where Apache has the same quantity, and zoo_ names for
// Zoo's own. Latencies and times are in milliseconds, as Apache's.
type serverMetrics struct {
	set *metrics.Set

	readLatency, updateLatency     *metrics.Summary
	fsyncTime, snapshotTime        *metrics.Summary
	startupSnapLoad, startupReplay *metrics.Summary
	startupTxnsLoaded, dbInitTime  *metrics.Summary
	txnsPerFsync, snapshotBytes    *metrics.Summary

	bytesReceived, responseBytes *metrics.Counter
	connRequests, connRejected   *metrics.Counter
	staleSessionsExpired         *metrics.Counter
	snapCount, commitCount       *metrics.Counter
	unsuccessfulHandshake        *metrics.Counter

	// Zoo's own.
	fsyncSeconds  *metrics.Histogram
	throttleWaits *metrics.Counter
	dropped       *metrics.Counter
	// completedTwice counts completions of a request that had already
	// ended: a bug, ignored (no second reply, no second token back).
	completedTwice *metrics.Counter
}

func newServerMetrics(set *metrics.Set) *serverMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	m := &serverMetrics{
		set:                   set,
		readLatency:           set.Summary("readlatency", true),
		updateLatency:         set.Summary("updatelatency", true),
		fsyncTime:             set.Summary("fsynctime", false),
		snapshotTime:          set.Summary("snapshottime", false),
		startupSnapLoad:       set.Summary("startup_snap_load_time", false),
		startupReplay:         set.Summary("startup_txns_load_time", false),
		startupTxnsLoaded:     set.Summary("startup_txns_loaded", false),
		dbInitTime:            set.Summary("dbinittime", false),
		txnsPerFsync:          set.Summary("sync_processor_batch_size", false),
		snapshotBytes:         set.Summary("zoo_snapshot_bytes", false),
		bytesReceived:         set.Counter("bytes_received_count"),
		responseBytes:         set.Counter("response_bytes"),
		connRequests:          set.Counter("connection_request_count"),
		connRejected:          set.Counter("connection_rejected"),
		staleSessionsExpired:  set.Counter("stale_sessions_expired"),
		snapCount:             set.Counter("snap_count"),
		commitCount:           set.Counter("commit_count"),
		unsuccessfulHandshake: set.Counter("unsuccessful_handshake"),
		fsyncSeconds:          set.Histogram("zoo_fsync_duration_seconds", metrics.ExponentialBounds(0.0001, 2, 16)),
		throttleWaits:         set.Counter("zoo_throttled_requests"),
		dropped:               set.Counter("zoo_dropped_requests"),
		completedTwice:        set.Counter("zoo_requests_completed_twice"),
	}
	set.Describe("zoo_fsync_duration_seconds", "Time to make one batch of log entries durable (write and fsync).")
	set.Describe("zoo_throttled_requests", "Requests that waited because globalOutstandingLimit requests were in flight.")
	set.Describe("zoo_dropped_requests", "Requests failed with ConnectionLoss because their proposal was dropped (leader change, lost forward).")
	set.Describe("zoo_requests_completed_twice", "Completions of a request that had already ended (a bug; the second is ignored).")
	set.Describe("sync_processor_batch_size", "Log entries made durable by one fsync (group commit).")
	set.Describe("zoo_snapshot_bytes", "Size of each snapshot file written, in bytes.")
	return m
}

// Metrics returns the server's metrics, for the AdminServer and the
// Prometheus endpoint.
func (s *Server) Metrics() *metrics.Set { return s.metrics.set }

// registerGauges adds the gauges Apache's ZooKeeperServer.registerMetrics
// and the quorum servers register, read together from one look at the
// server, and Zoo's own.
func (s *Server) registerGauges() {
	s.metrics.set.Group(func(emit func(metrics.Metric)) {
		if s.rep == nil {
			return
		}
		src := source{s}
		st, m := src.Stats(), src.Monitor()
		g := func(name string, v float64) { emit(metrics.Metric{Name: name, Value: v}) }
		g("znode_count", float64(st.NodeCount))
		g("watch_count", float64(m.WatchCount))
		g("ephemerals_count", float64(m.EphemeralsCount))
		g("approximate_data_size", float64(m.ApproximateDataSize))
		g("global_sessions", float64(m.GlobalSessions))
		g("local_sessions", float64(m.LocalSessions))
		g("avg_latency", st.Latency.Avg())
		g("max_latency", float64(st.Latency.Max))
		g("min_latency", float64(st.Latency.Min))
		g("packets_received", float64(st.Received))
		g("packets_sent", float64(st.Sent))
		g("num_alive_connections", float64(st.Connections))
		g("outstanding_requests", float64(st.Outstanding))
		g("uptime", float64(m.UptimeMs))
		g("last_client_response_size", float64(m.ClientResponseSize.Last))
		g("max_client_response_size", float64(m.ClientResponseSize.Max))
		g("min_client_response_size", float64(m.ClientResponseSize.Min))
		g("open_file_descriptor_count", float64(m.OpenFileDescriptors))
		g("max_file_descriptor_count", float64(m.MaxFileDescriptors))
		g("auth_failed_count", float64(m.AuthFailed))
		g("connection_drop_probability", 0) // Zoo never drops connections at random
		if s.cfg.Ensemble.enabled() {
			g("quorum_size", float64(m.QuorumSize))
			if st.Mode == fourlw.ModeLeader {
				g("learners", float64(m.Learners))
				g("synced_followers", float64(m.SyncedFollowers))
			}
		}
		// Zoo's own: where raft stands.
		g("zoo_raft_term", float64(s.rep.Term()))
		g("zoo_applied_index", float64(s.rep.LastZxid()))
		g("zoo_leader_id", float64(s.rep.Leader()))
		for _, p := range s.rep.Progress() {
			emit(metrics.Metric{Name: "zoo_peer_lag", Value: float64(p.Lag),
				Help:   "Log entries a member is behind the leader (on the leader).",
				Labels: []string{"peer", strconv.FormatUint(p.ID, 10)}})
		}
	})
}

// digestLogLimit and digestLogInterval are Apache's DataTree
// DIGEST_LOG_LIMIT and DIGEST_LOG_INTERVAL: a digest is kept for every
// 128 zxids, and the newest 1024 of them.
const (
	digestLogLimit    = 1024
	digestLogInterval = 128
)

// digestLog is the tree digest history that "hash" prints. Zoo's zxids
// (raft indexes) include entries that are not txns, so a digest is taken
// at the first txn applied in each interval of 128 zxids.
type digestLog struct {
	mu      sync.Mutex
	entries []fourlw.ZxidDigest
	last    int64 // the interval of the newest entry
}

// applied records the digest after the txn at zxid, if it opens a new
// interval. It runs on the apply goroutine with the state write-locked.
func (d *digestLog) applied(st *txn.State, zxid int64) {
	interval := zxid / digestLogInterval
	d.mu.Lock()
	defer d.mu.Unlock()
	if interval <= d.last {
		return
	}
	d.last = interval
	if len(d.entries) == digestLogLimit {
		d.entries = append(d.entries[:0], d.entries[1:]...)
	}
	d.entries = append(d.entries, fourlw.ZxidDigest{Zxid: zxid, Digest: st.Tree.ApacheDigest()})
}

func (d *digestLog) get() []fourlw.ZxidDigest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]fourlw.ZxidDigest(nil), d.entries...)
}

// dirSize is the total size of the regular files under dir, as dirs and
// conf report the data and log directories; 0 when there is none.
func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed by a purge meanwhile
		}
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// onPersist, onSnapshot and onRecover are the replica's metric hooks.
func (s *Server) onPersist(d time.Duration, entries int) {
	if limit := s.fsyncWarningThreshold(); d.Milliseconds() > limit.Milliseconds() {
		// Apache's FileTxnLog warning: a slow disk shows in every write's
		// latency, and past an election timeout it costs the leader.
		s.stats.slowFsyncs.Add(1)
		s.log.Warn("fsync-ing the write-ahead log took longer than fsync.warningthresholdms, which adversely affects operation latency",
			"took", d.Round(time.Millisecond), "threshold", limit, "entries", entries)
	}
	s.metrics.fsyncTime.Observe(d.Milliseconds())
	s.metrics.fsyncSeconds.Observe(d.Seconds())
	s.metrics.txnsPerFsync.Observe(int64(entries))
}

// fsyncWarningThreshold is Config.FsyncWarningThreshold, compared in whole
// milliseconds as Apache does.
func (s *Server) fsyncWarningThreshold() time.Duration {
	switch t := s.cfg.FsyncWarningThreshold; {
	case t == 0:
		return time.Second
	case t < 0:
		return 0
	default:
		return t
	}
}

func (s *Server) onSnapshot(d time.Duration, bytes int64) {
	s.metrics.snapCount.Inc()
	s.metrics.snapshotTime.Observe(d.Milliseconds())
	s.metrics.snapshotBytes.Observe(bytes)
}

func (s *Server) onRecover(snapLoad, replay time.Duration, entries uint64) {
	s.metrics.startupSnapLoad.Observe(snapLoad.Milliseconds())
	s.metrics.startupReplay.Observe(replay.Milliseconds())
	s.metrics.startupTxnsLoaded.Observe(int64(entries))
	s.metrics.dbInitTime.Observe((snapLoad + replay).Milliseconds())
	s.recovered.Store(snapLoad > 0 || entries > 0)
}
