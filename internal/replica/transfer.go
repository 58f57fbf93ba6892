package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/txn"
)

// A follower too far behind for the entries the leader keeps in memory
// (Config.TrailingEntries) gets a snapshot: raft emits a MsgSnap naming
// the leader's newest snapshot (index, term, membership), and the loop
// streams that snapshot's file beside it, off the link (Transport's
// SendStream), so raft traffic keeps flowing. The follower stores and
// verifies the file, then steps the MsgSnap; raft hands the snapshot back
// in a Ready, the loop records it in the log (the WAL marker is the commit
// point, as for its own snapshots) and installs the state. The log after
// the snapshot follows as usual: a fuzzy snapshot plus the replay of the
// idempotent txns after its label gives the exact state.

// ErrBadSnapshotStream means a stream's header is not a raft MsgSnap.
var ErrBadSnapshotStream = errors.New("replica: a snapshot stream must start with a MsgSnap")

// snapSent is the outcome of a snapshot stream, for raft.
type snapSent struct {
	to     uint64
	status raft.SnapshotStatus
}

// receivedSnap is a snapshot a leader sent, stored and verified, waiting
// for raft to hand it back for installing.
type receivedSnap struct {
	meta  raftpb.SnapshotMetadata
	state *txn.State
}

// sendSnapshot starts streaming the snapshot m names to its follower,
// unless a stream to it is already under way (raft sends one at a time;
// a second would only repeat it).
func (r *Replica) sendSnapshot(m raftpb.Message) {
	if r.streaming[m.To] {
		return
	}
	r.streaming[m.To] = true
	if r.drv != nil {
		r.drv.stream(r, m)
		return
	}
	// Stepped directly: the stream is sent now, and its outcome reported
	// to raft at the end of the turn (reportStreams).
	r.streamReport = append(r.streamReport, r.sendStream(context.Background(), m))
}

// sendStream streams a snapshot and says how it went.
func (r *Replica) sendStream(ctx context.Context, m raftpb.Message) snapSent {
	status := raft.SnapshotFinish
	if err := r.streamSnapshot(ctx, m); err != nil {
		status = raft.SnapshotFailure
		r.cfg.Logger.Warn("sending a snapshot failed", "to", m.To, "index", m.Snapshot.Metadata.Index, "err", err)
	} else {
		r.cfg.Logger.Info("sent a snapshot", "to", m.To, "index", m.Snapshot.Metadata.Index)
	}
	return snapSent{to: m.To, status: status}
}

// snapshotSent tells raft how a snapshot stream went.
func (r *Replica) snapshotSent(s snapSent) {
	delete(r.streaming, s.to)
	r.rn.ReportSnapshot(s.to, s.status)
}

// reportStreams tells raft how the streams sent inline went.
func (r *Replica) reportStreams() {
	for _, s := range r.streamReport {
		r.snapshotSent(s)
	}
	r.streamReport = r.streamReport[:0]
}

// streamSnapshot sends m with the snapshot's file.
func (r *Replica) streamSnapshot(ctx context.Context, m raftpb.Message) error {
	meta := m.Snapshot.Metadata
	m.Snapshot.Data = nil
	header, err := m.Marshal()
	if err != nil {
		return err
	}
	f, err := r.cfg.FS.Open(filepath.Join(r.cfg.SnapDir, snap.Name(meta.Index)))
	if err != nil {
		return err
	}
	defer f.Close()
	return r.cfg.Transport.SendStream(ctx, m.To, header, f)
}

// StepSnapshot is ReceiveSnapshot for a core stepped directly: the file is
// stored and verified, and raft steps the MsgSnap at once.
func (r *Replica) StepSnapshot(from uint64, header []byte, body io.Reader) error {
	in, err := r.storeSnapshot(from, header, body)
	if err != nil {
		return err
	}
	r.receiveSnapshot(in)
	return nil
}

// storeSnapshot stores and verifies a snapshot stream from the leader
// (header is the MsgSnap, body the snapshot file), for the core to step.
// It touches no core state, so the driver runs it off the loop.
func (r *Replica) storeSnapshot(from uint64, header []byte, body io.Reader) (inbound, error) {
	var m raftpb.Message
	if err := m.Unmarshal(header); err != nil || m.Type != raftpb.MsgSnap || m.Snapshot == nil || m.Snapshot.Metadata.Index == 0 {
		return inbound{}, ErrBadSnapshotStream
	}
	meta := m.Snapshot.Metadata
	_, st, err := snap.Receive(r.cfg.FS, r.cfg.SnapDir, meta.Index, body, snap.Options{Logger: r.cfg.Logger})
	if err != nil {
		return inbound{}, fmt.Errorf("replica: snapshot at %d from %d: %w", meta.Index, from, err)
	}
	return inbound{from: from, kind: kindSnapshot, msg: &m, snap: &receivedSnap{meta: meta, state: st}}, nil
}

// kindSnapshot marks an inbound snapshot; it never travels as a message
// kind of its own.
const kindSnapshot uint8 = 0

// receiveSnapshot steps a received MsgSnap, keeping its state for install.
func (r *Replica) receiveSnapshot(in inbound) {
	if in.done != nil {
		defer close(in.done)
	}
	r.received = in.snap
	if err := r.rn.Step(*in.msg); err != nil {
		r.cfg.Logger.Debug("raft step snapshot", "from", in.from, "err", err)
	}
}

// install replaces the state with a snapshot raft has accepted (and the
// log has recorded). Requests in flight here fail: what they were waiting
// for may be inside the snapshot, unseen. The server is told (Restored),
// with the state before, so that it can fire the watches the skipped
// changes concern.
func (r *Replica) install(sn raftpb.Snapshot) error {
	meta := sn.Metadata
	rs := r.received
	r.received = nil
	var st *txn.State
	switch {
	case rs != nil && rs.meta.Index == meta.Index && rs.meta.Term == meta.Term:
		st = rs.state
	default:
		var err error
		if _, st, err = snap.LoadFile(r.cfg.FS, r.cfg.SnapDir, snap.Name(meta.Index), snap.Options{}); err != nil {
			return fmt.Errorf("replica: installing the snapshot at %d: %w", meta.Index, err)
		}
	}
	// What was in flight fails before the state changes: its outcome
	// may be inside the snapshot, unseen.
	r.dropAll()
	r.mu.Lock()
	prev, prevZxid := *r.state, r.lastZxid.Load()
	*r.state = *st // in place: the prepper holds this pointer
	r.applied, r.appliedTerm = meta.Index, meta.Term
	r.lastZxid.Store(int64(meta.Index))
	r.setConfState(meta.ConfState) // before the server looks at Members
	// Told under the lock, as an apply is: no read sees the new state
	// before the server has moved its watches to it.
	r.cfg.OnApply(Event{Kind: Restored, Zxid: int64(meta.Index), State: r.state, Prev: &prev, PrevZxid: prevZxid})
	r.mu.Unlock()
	r.compacted = meta.Index
	r.nextSnapshot()
	r.cfg.Logger.Info("installed a snapshot from the leader", "index", meta.Index, "term", meta.Term,
		"nodes", st.Tree.NodeCount(), "sessions", len(st.Sessions))
	return nil
}

// snapshotStorage is raft's Storage with a Snapshot that is never older
// than the membership: raft's follower ignores a snapshot whose ConfState
// does not name it, so a member added since the last snapshot would be
// sent, forever, one it cannot use: a snapshot file is started and raft
// told to try again later.
type snapshotStorage struct {
	raft.Storage
	r *Replica
}

// Snapshot implements raft.Storage. raft calls it on the loop goroutine.
func (s snapshotStorage) Snapshot() (raftpb.Snapshot, error) {
	sn, err := s.Storage.Snapshot()
	r := s.r
	if err != nil || sn.Metadata.Index >= r.confIndex {
		return sn, err
	}
	r.forceSnapshot()
	return raftpb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
}
