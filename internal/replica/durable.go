package replica

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/wal"
)

// recover opens the WAL in Config.Dir, loads the snapshot its newest marker
// names into Config.State and builds the raft storage over what the log
// holds after it. fresh reports an empty log, which needs bootstrapping.
func (r *Replica) recover() (fresh bool, err error) {
	cfg := &r.cfg
	if err := checkDataDirs(cfg.FS, cfg.Dir, cfg.SnapDir); err != nil {
		return false, err
	}
	ahead := r.loadAhead()
	defer ahead.discard()
	// Until the membership is known (setConfState), by zoo.cfg's voters,
	// with the same rule: only a sole voter's commit-only writes must not
	// be lazy, learners or not.
	r.lazyCommit = !soleVoterIn(raftpb.ConfState{Voters: cfg.Voters}, cfg.ID)
	w, st, err := wal.Open(cfg.FS, cfg.Dir, wal.Options{Logger: cfg.Logger, SegmentSize: cfg.SegmentSize, NoSync: cfg.NoSync || mutated(MutAckBeforeFsync),
		LazyCommit: r.lazyCommit})
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
		if st, err = r.loadSnapshot(w, st, ahead.take()); err != nil {
			return false, err
		}
	} else if err := snap.CleanTemp(cfg.FS, cfg.SnapDir); err != nil {
		cfg.Logger.Warn("snapshot temp files", "err", err)
	}
	if hs := &st.HardState; *hs != (raftpb.HardState{}) && hs.Commit < st.Snapshot.Index {
		// A commit-only HardState is written lazily (wal's LazyCommit)
		// and may be lost in a crash, while the later snapshot marker,
		// fsynced, survives: its index was applied, so it was committed.
		// raft refuses a commit index below the snapshot's.
		hs.Commit = st.Snapshot.Index
	}
	disk, err := wal.NewStorage(w, st, nil)
	if err != nil {
		return false, fmt.Errorf("replica: %w", err)
	}
	r.log, r.disk = w, disk
	w.SetLazyCommit(r.lazyCommit) // the snapshot's membership, if one was loaded
	r.nextSnapshot()
	fresh = st.HardState == (raftpb.HardState{}) && len(st.Entries) == 0 && st.Snapshot.Index == 0
	return fresh, nil
}

// loadSnapshot restores the state from the newest snapshot that the log
// has a marker for (a file without one was never committed) and that
// verifies. Should the newest be damaged or missing, an older one the log
// still holds the entries after will do, and the log is read again from
// there. It returns the log state to start raft from.
func (r *Replica) loadSnapshot(w *wal.WAL, ws *wal.State, early loaded) (*wal.State, error) {
	accept := func(sm snap.Meta) bool {
		return slices.ContainsFunc(ws.Markers, func(m raftpb.SnapshotMetadata) bool {
			return sm.Index == m.Index && sm.Term == m.Term
		})
	}
	// The file loaded ahead is used if the log has its marker; else (it
	// failed, or was never committed) the files are tried again in turn.
	meta, st, took, err := early.meta, early.st, early.took, early.err
	var skipped []snap.Skipped
	if err != nil || st == nil || !accept(meta) {
		start := r.cfg.Clock()
		meta, st, skipped, err = snap.Load(r.cfg.FS, r.cfg.SnapDir, snap.Options{Logger: r.cfg.Logger, Accept: accept})
		took = r.cfg.Clock().Sub(start)
	} else if err := snap.CleanTemp(r.cfg.FS, r.cfg.SnapDir); err != nil {
		r.cfg.Logger.Warn("snapshot temp files", "err", err) // as Load does
	}
	r.snapLoad = took
	if err != nil {
		return nil, fmt.Errorf("replica: the log refers to the snapshot at index %d: %w", ws.Snapshot.Index, err)
	}
	if meta.Index != ws.Snapshot.Index {
		r.cfg.Logger.Warn("the newest snapshot is unusable: recovering from an older one and the log after it",
			"want", ws.Snapshot.Index, "using", meta.Index, "skipped", skippedNames(skipped))
		if ws, err = w.ReadFrom(meta.Index); err != nil {
			return nil, fmt.Errorf("replica: reading the log after the snapshot at %d: %w", meta.Index, err)
		}
	}
	// In place: the prepper holds this pointer.
	*r.state = *st
	r.applied, r.appliedTerm = meta.Index, meta.Term
	r.compacted = meta.Index
	r.lastZxid.Store(int64(meta.Index))
	if fi, err := r.cfg.FS.Stat(filepath.Join(r.cfg.SnapDir, snap.Name(meta.Index))); err == nil {
		r.snapProgress.lastSnap = fi.Size()
	}
	r.setConfState(ws.Snapshot.ConfState)
	r.cfg.Logger.Info("loaded snapshot", "index", meta.Index, "term", meta.Term,
		"nodes", st.Tree.NodeCount(), "sessions", len(st.Sessions), "duration", r.snapLoad.Round(time.Millisecond))
	return ws, nil
}

// loaded is a snapshot loaded ahead of the log (loadAhead); st is nil if
// none was.
type loaded struct {
	meta snap.Meta
	st   *txn.State
	took time.Duration
	err  error
}

// ahead is a load of the newest snapshot file running beside wal.Open.
type ahead struct {
	c    chan loaded // nil: none was started
	done bool
}

// loadAhead starts loading the newest snapshot file while the log is read
// (issue 14: a restart at 3M znodes spent a second reading the log before
// the load began). Which snapshot recovery may use is the log's to say
// (its markers), so loadSnapshot checks the file loaded ahead before it
// uses it. A replica stepped directly (a simulation) loads in turn, as
// its runs must repeat exactly.
func (r *Replica) loadAhead() *ahead {
	if r.drv == nil {
		return &ahead{}
	}
	a := &ahead{c: make(chan loaded, 1)}
	fs, dir, log := r.cfg.FS, r.cfg.SnapDir, r.cfg.Logger
	go func() {
		var l loaded
		start := time.Now()
		infos, err := snap.List(fs, dir)
		if err == nil && len(infos) > 0 {
			l.meta, l.st, l.err = snap.LoadFile(fs, dir, infos[len(infos)-1].Name, snap.Options{Logger: log})
		}
		l.took = time.Since(start)
		a.c <- l
	}()
	return a
}

// take waits for the load ahead, if one was started.
func (a *ahead) take() loaded {
	if a.c == nil || a.done {
		return loaded{}
	}
	a.done = true
	return <-a.c
}

// discard waits for a load ahead that was not taken: recover returns only
// once nothing reads the snapshot directory any more.
func (a *ahead) discard() { a.take() }

func skippedNames(sk []snap.Skipped) []string {
	var names []string
	for _, s := range sk {
		if !errors.Is(s.Err, snap.ErrNotAccepted) {
			names = append(names, s.Name)
		}
	}
	return names
}

// persist makes a Ready's snapshot, HardState and entries durable. An
// error from the WAL is fatal.
func (r *Replica) persist(hs raftpb.HardState, ents []raftpb.Entry, sn raftpb.Snapshot) error {
	if !raft.IsEmptySnap(sn) {
		if err := r.disk.ApplySnapshot(sn); err != nil {
			return err
		}
	}
	if r.cfg.OnPersist == nil || len(ents) == 0 {
		return r.disk.Save(hs, ents)
	}
	start := r.cfg.Clock()
	err := r.disk.Save(hs, ents)
	r.cfg.OnPersist(r.cfg.Clock().Sub(start), len(ents))
	return err
}

// recovered logs what the replay of the log after the snapshot did, and
// reports it with the snapshot's load time.
func (r *Replica) recovered(replay time.Duration, entries uint64) {
	if entries > 0 {
		var nodes int
		r.Read(func(st *txn.State, _ int64) { nodes = st.Tree.NodeCount() })
		r.cfg.Logger.Info("replayed the log", "entries", entries, "duration", replay.Round(time.Millisecond),
			"applied", r.applied, "nodes", nodes)
	}
	if r.cfg.OnRecover != nil {
		r.cfg.OnRecover(r.snapLoad, replay, entries)
	}
}

// maybeSnapshot starts a snapshot once enough entries, and bytes of log,
// were applied since the last (see pace.go), unless one is still being
// written. The
// tree is frozen here, between two applies, so the snapshot holds exactly
// the state at its label. With a driver the file is written in the
// background from that frozen view while apply goes on (writeSnapshot),
// and the loop records it in the log when it is done (snapshotDone); a
// core stepped directly does both at once, so that a simulation stays
// deterministic. An error means the log is broken.
func (r *Replica) maybeSnapshot() error {
	if r.snapBusy || !r.snapshotDue() {
		return nil
	}
	r.nextSnapshot()
	r.snapBusy = true
	job := snapJob{
		meta:  snap.Meta{Index: r.applied, Term: r.appliedTerm, Zxid: r.lastZxid.Load()},
		conf:  r.confState,
		view:  r.freeze(),
		purge: r.cfg.PurgeInterval == 0, // else purgeInterval's timer (startPurge)
	}
	if r.drv == nil {
		return r.snapshotDone(r.takeSnapshot(job))
	}
	r.drv.writeSnapshot(r, job)
	return nil
}

// snapJob is a snapshot being written: its label, the membership to
// record with it, and the state to write (nil view: none, only a purge).
// purge says to purge the snapshots and the log after it.
type snapJob struct {
	meta  snap.Meta
	conf  raftpb.ConfState
	view  frozenState
	purge bool
}

type snapResult struct {
	job  snapJob
	size int64 // of the file written, which paces the next (pace.go)
	err  error // writing the file: the log still holds everything

	superseded bool  // the leader's newer snapshot was installed meanwhile
	markerErr  error // recording it in the log: the WAL is broken
}

// takeSnapshot writes the snapshot file of job, records it in the log
// and purges what it makes unneeded: all the disk work of a snapshot,
// done off the loop by a running server's driver, so that the loop never
// waits for the log writer's fsync (whose lock the marker's write takes)
// or for file removals.
func (r *Replica) takeSnapshot(job snapJob) snapResult {
	res := snapResult{job: job}
	if job.view.tree != nil {
		res = r.writeSnapshot(job)
		if res.err != nil {
			return res
		}
		_, err := r.disk.CreateSnapshot(job.meta.Index, job.conf, nil)
		switch {
		case errors.Is(err, raft.ErrSnapOutOfDate):
			// A snapshot from the leader was installed while this one was
			// being walked: it is older, and may mix the two states.
			res.superseded = true
			return res
		case err != nil:
			res.markerErr = fmt.Errorf("replica: snapshot marker at %d: %w", job.meta.Index, err)
			return res
		}
	}
	if job.purge {
		r.purge()
	}
	return res
}

// frozenState is the replicated state as of one moment: a frozen view of
// the tree (tree.Frozen) and a copy of the session table, sorted by id.
type frozenState struct {
	tree     *tree.Frozen
	sessions []sessionEntry
}

type sessionEntry struct {
	id   int64
	info txn.SessionInfo
}

// freeze takes a frozenState of the current state. It holds the write
// lock for the time it takes to copy the session table: the tree itself
// is not copied, its writer saves a node for the view when it first
// changes it.
func (r *Replica) freeze() frozenState {
	r.mu.Lock()
	defer r.mu.Unlock()
	sessions := make([]sessionEntry, 0, len(r.state.Sessions))
	for id, s := range r.state.Sessions {
		sessions = append(sessions, sessionEntry{id, s})
	}
	return frozenState{tree: r.state.Tree.Freeze(), sessions: sessions}
}

// testHookWalk, if set, runs after the state is frozen and before the
// walk reads any node: tests change the tree there.
var testHookWalk func()

// testHookWalkNode, if set, runs before the walk writes its i-th node
// (from 0), with no lock held: tests pause the walk in the middle there.
var testHookWalkNode func(i int)

// walkYieldEvery is how many znodes the background walk writes between
// yields of its processor. On a busy machine the walk and the
// compression of a large tree would otherwise hold a core for whole
// scheduler slices at a time, and the apply loop, the WAL's fsync and the
// connections wait behind it: the snapshot is paced to give way.
const walkYieldEvery = 256

// writeSnapshot writes the snapshot of job's frozen state (DESIGN
// decision 9, made exact: see maybeSnapshot). Recovery still replays the
// log after the label; txns are idempotent, so a state at or after the
// label would do as well.
func (r *Replica) writeSnapshot(job snapJob) snapResult {
	start := time.Now()
	defer job.view.tree.Close()
	var fs snap.FS = writebackFS{FS: r.cfg.FS, every: snapSyncEvery}
	if r.cfg.NoSync {
		// forceSync=no, or in memory: nothing to pace.
		fs = r.cfg.FS
	}
	p, err := snap.Create(fs, r.cfg.SnapDir, job.meta, snap.Options{Compression: r.cfg.SnapCompression})
	if err != nil {
		return snapResult{job: job, err: err}
	}
	if err := writeFrozen(p.Writer(), job.view); err != nil {
		_ = p.Abort()
		return snapResult{job: job, err: err}
	}
	name, err := p.Commit()
	if err != nil {
		return snapResult{job: job, err: err}
	}
	res := snapResult{job: job}
	if fi, serr := r.cfg.FS.Stat(filepath.Join(r.cfg.SnapDir, name)); serr == nil {
		res.size = fi.Size()
	}
	if r.cfg.OnSnapshot != nil {
		r.cfg.OnSnapshot(time.Since(start), res.size)
	}
	return res
}

// writeFrozen feeds a frozen state to w: every node, parents first, then
// the sessions in id order, yielding the processor now and then.
func writeFrozen(w *snap.Writer, view frozenState) error {
	if testHookWalk != nil {
		testHookWalk()
	}
	n := 0
	err := view.tree.Walk(func(path []byte, node tree.Node) error {
		if testHookWalkNode != nil {
			testHookWalkNode(n)
		}
		return w.AddNodeBytes(path, node.Data, node.ACL, node.Stat)
	}, func() {
		if n++; n%walkYieldEvery == 0 {
			runtime.Gosched()
		}
	})
	if err != nil {
		return err
	}
	slices.SortFunc(view.sessions, func(a, b sessionEntry) int { return cmp.Compare(a.id, b.id) })
	for _, s := range view.sessions {
		if err := w.AddSession(s.id, s.info.TimeoutMs, s.info.Password); err != nil {
			return err
		}
	}
	return nil
}

// snapshotDone takes a snapshot's outcome (takeSnapshot) back on the
// loop and compacts the log behind it. A failed file is only logged: the
// log still holds everything, and the next try comes soon. A failed
// marker means the WAL is broken: fatal.
func (r *Replica) snapshotDone(res snapResult) error {
	r.snapBusy = false
	meta := res.job.meta
	switch {
	case res.job.view.tree == nil: // a purge only
		return nil
	case res.err != nil:
		r.cfg.Logger.Warn("snapshot failed; the log keeps everything", "index", meta.Index, "err", res.err)
		return nil
	case res.markerErr != nil:
		return res.markerErr
	}
	r.snapProgress.lastSnap = res.size
	if res.superseded {
		r.cfg.Logger.Info("snapshot superseded by the leader's", "index", meta.Index)
		return nil
	}
	// Keep some entries behind the snapshot in memory, for followers
	// that lag a little, and more for one that lags more (retain.go).
	r.compactBehind(meta.Index)
	r.cfg.Logger.Info("snapshot taken", "index", meta.Index)
	return nil
}

// startPurge purges on the snapshot goroutine, if purgeInterval's timer
// asked for it, once no snapshot is being taken.
func (r *Replica) startPurge() {
	if !r.purgeDue || r.snapBusy {
		return
	}
	r.purgeDue = false
	r.snapBusy = true
	r.drv.writeSnapshot(r, snapJob{purge: true})
}

// purge removes all but the newest SnapRetain snapshots and the log
// segments that only snapshots older than those need. Failures are
// logged: the next purge tries again.
func (r *Replica) purge() {
	if err := snap.Purge(r.cfg.FS, r.cfg.SnapDir, r.cfg.SnapRetain); err != nil {
		r.cfg.Logger.Warn("purging snapshots", "err", err)
		return
	}
	kept, err := snap.List(r.cfg.FS, r.cfg.SnapDir)
	if err != nil {
		r.cfg.Logger.Warn("purging the log", "err", err)
		return
	}
	// The oldest kept snapshot that can be read at all; a damaged one
	// needs no log after it.
	i := slices.IndexFunc(kept, func(in snap.Info) bool { return in.Err == nil })
	if i < 0 {
		return
	}
	if err := r.disk.Release(kept[i].Meta.Index); err != nil {
		r.cfg.Logger.Warn("purging the log", "err", err)
	}
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

// replayProgressEvery is how often a long replay at start-up says how far
// it has got.
const replayProgressEvery = 5 * time.Second

// replayProgress logs how far the replay of the log at start-up has got,
// every replayProgressEvery, so that a long start is not mistaken for a
// hang.
func (r *Replica) replayProgress() {
	if r.replayLogged.IsZero() || r.cfg.Clock().Sub(r.replayLogged) < replayProgressEvery {
		return
	}
	r.replayLogged = r.cfg.Clock()
	r.cfg.Logger.Info("replaying the log", "applied", r.applied, "committed", r.rn.Status().Commit)
}
