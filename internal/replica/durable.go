package replica

import (
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/wal"
)

// ErrSnapshotReceived means raft handed the loop a snapshot from a leader,
// which a one-voter group never does; installing one is not implemented.
var ErrSnapshotReceived = errors.New("replica: installing a leader's snapshot is not implemented")

// recover opens the WAL in Config.Dir, loads the snapshot its newest marker
// names into Config.State and builds the raft storage over what the log
// holds after it. fresh reports an empty log, which needs bootstrapping.
func (r *Replica) recover() (fresh bool, err error) {
	cfg := &r.cfg
	w, st, err := wal.Open(cfg.FS, cfg.Dir, wal.Options{Logger: cfg.Logger, SegmentSize: cfg.SegmentSize})
	if err != nil {
		return false, fmt.Errorf("replica: %w", err)
	}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	if err := cfg.FS.MkdirAll(cfg.SnapDir, 0o755); err != nil {
		return false, fmt.Errorf("replica: %w", err)
	}
	if st.Snapshot.Index > 0 {
		if err := r.loadSnapshot(st.Snapshot); err != nil {
			return false, err
		}
	} else if err := snap.CleanTemp(cfg.FS, cfg.SnapDir); err != nil {
		cfg.Logger.Warn("snapshot temp files", "err", err)
	}
	disk, err := wal.NewStorage(w, st, nil)
	if err != nil {
		return false, fmt.Errorf("replica: %w", err)
	}
	r.log, r.disk = w, disk
	r.snapNext = r.applied + r.snapInterval()
	fresh = st.HardState == (raftpb.HardState{}) && len(st.Entries) == 0 && st.Snapshot.Index == 0
	return fresh, nil
}

// loadSnapshot restores the state from the snapshot the log's marker names.
// Only that one will do: the log dropped the entries it covers, and a
// newer file without a marker was never committed.
func (r *Replica) loadSnapshot(m raftpb.SnapshotMetadata) error {
	accept := func(sm snap.Meta) bool { return sm.Index == m.Index && sm.Term == m.Term }
	meta, st, _, err := snap.Load(r.cfg.FS, r.cfg.SnapDir, snap.Options{Logger: r.cfg.Logger, Accept: accept})
	if err != nil {
		return fmt.Errorf("replica: the log refers to the snapshot at index %d: %w", m.Index, err)
	}
	// In place: the prepper holds this pointer.
	*r.state = *st
	r.applied, r.appliedTerm = meta.Index, meta.Term
	r.lastZxid.Store(int64(meta.Index))
	r.confState = m.ConfState
	r.cfg.Logger.Info("loaded snapshot", "index", meta.Index, "term", meta.Term,
		"nodes", st.Tree.NodeCount(), "sessions", len(st.Sessions))
	return nil
}

// persist makes a Ready's snapshot, HardState and entries durable (with a
// Dir) or visible to raft (without). An error from the WAL is fatal.
func (r *Replica) persist(hs raftpb.HardState, ents []raftpb.Entry, sn raftpb.Snapshot) error {
	if r.disk == nil {
		r.persistMemory(hs, ents, sn)
		return nil
	}
	if sn.Metadata.Index > 0 {
		return ErrSnapshotReceived
	}
	return r.disk.Save(hs, ents)
}

// maybeSnapshot writes a snapshot once SnapCount entries were applied since
// the last, then records it in the log and drops the log before it.
//
// The snapshot is taken on the loop, which is the state's only writer, so
// the walk sees a quiescent state (a fuzzy walk off the loop would not
// stall apply; a later optimisation). A failed snapshot file is only
// logged: the log still holds everything, and the next try comes SnapCount
// entries later. A failed marker means the WAL is broken: fatal.
func (r *Replica) maybeSnapshot() error {
	if r.disk == nil || r.applied < r.snapNext {
		return nil
	}
	r.snapNext = r.applied + r.snapInterval()
	meta := snap.Meta{Index: r.applied, Term: r.appliedTerm, Zxid: r.lastZxid.Load()}
	r.mu.RLock()
	_, err := snap.Write(r.cfg.FS, r.cfg.SnapDir, meta, r.state, snap.Options{Compression: r.cfg.SnapCompression})
	r.mu.RUnlock()
	if err != nil {
		r.cfg.Logger.Warn("snapshot failed; the log keeps everything", "index", meta.Index, "err", err)
		return nil
	}
	if _, err := r.disk.CreateSnapshot(meta.Index, r.confState, nil); err != nil {
		return fmt.Errorf("replica: snapshot marker at %d: %w", meta.Index, err)
	}
	if err := r.disk.Compact(meta.Index); err != nil {
		r.cfg.Logger.Warn("log compaction", "index", meta.Index, "err", err)
	}
	if err := snap.Purge(r.cfg.FS, r.cfg.SnapDir, r.cfg.SnapRetain); err != nil {
		r.cfg.Logger.Warn("purging snapshots", "err", err)
	}
	r.cfg.Logger.Info("snapshot taken", "index", meta.Index)
	return nil
}

// snapInterval is how many applied entries to wait before the next
// snapshot: between SnapCount/2 and SnapCount, at random, as Apache's
// SyncRequestProcessor rolls it, so that the members of an ensemble do not
// all snapshot at the same moment.
func (r *Replica) snapInterval() uint64 {
	half := r.cfg.SnapCount / 2
	return uint64(half + 1 + r.cfg.Rand(max(r.cfg.SnapCount-half, 1)))
}

// fail ends the loop after a fatal error: it records err for Err, stops
// taking requests and reports every pending one as Dropped.
func (r *Replica) fail(err error) {
	r.cfg.Logger.Error("replica stopping: the log cannot be written", "err", err)
	r.errMu.Lock()
	r.err = err
	r.errMu.Unlock()
	r.once.Do(func() { close(r.stopc) })
	r.drain()
	r.dropAll()
}

// closeLog closes the WAL, if there is one.
func (r *Replica) closeLog() {
	if r.log == nil {
		return
	}
	if err := r.log.Close(); err != nil {
		r.cfg.Logger.Warn("closing the log", "err", err)
	}
}
