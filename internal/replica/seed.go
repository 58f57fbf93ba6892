package replica

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
)

// SeedOptions describe a log to start from a given state.
type SeedOptions struct {
	// Index is the raft index (and so the zxid) the state stands at: the
	// next txn gets Index+1. Term is the raft term of that index; Zoo's
	// first election after start is for Term+1. Both at least 1.
	Index, Term uint64
	// Voters and Learners are the membership (ConfState).
	Voters, Learners []uint64
	Compression      snap.Compression
	SegmentSize      int64
}

// Seed writes a new log in logDir and a snapshot in snapDir holding st
// at opts.Index, as bootstrap writes a fresh one at index 1: a replica
// started on them recovers st and goes on from there. `zoo import` uses
// it to start the log where Apache's zxids ended, so that every zxid a
// client saw stays below Zoo's. logDir must hold no log.
func Seed(fs vfs.FS, logDir, snapDir string, st *txn.State, opts SeedOptions) error {
	if opts.Index < 1 || opts.Term < 1 || len(opts.Voters) == 0 {
		return fmt.Errorf("replica: seed: index %d, term %d, voters %v: all are required", opts.Index, opts.Term, opts.Voters)
	}
	if !Fresh(Config{FS: fs, Dir: logDir}) {
		return fmt.Errorf("replica: seed: %s already holds a log", logDir)
	}
	if err := fs.MkdirAll(snapDir, 0o755); err != nil {
		return fmt.Errorf("replica: seed: %w", err)
	}
	meta := snap.Meta{Index: opts.Index, Term: opts.Term, Zxid: int64(opts.Index)}
	if _, err := snap.Write(fs, snapDir, meta, st, snap.Options{Compression: opts.Compression}); err != nil {
		return fmt.Errorf("replica: seed: %w", err)
	}
	w, ws, err := wal.Open(fs, logDir, wal.Options{SegmentSize: opts.SegmentSize})
	if err != nil {
		return fmt.Errorf("replica: seed: %w", err)
	}
	disk, err := wal.NewStorage(w, ws, nil)
	if err == nil {
		cs := raftpb.ConfState{Voters: opts.Voters, Learners: opts.Learners}
		err = disk.ApplySnapshot(raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{Index: opts.Index, Term: opts.Term, ConfState: cs}})
	}
	if err == nil {
		err = disk.Save(raftpb.HardState{Term: opts.Term, Commit: opts.Index}, nil)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replica: seed: %w", err)
	}
	return nil
}

// Recover reads the state a server would start with from a data
// directory's log and snapshots (Config's FS, Dir, SnapDir and ID) and
// returns it with its last zxid, without running the replica. The
// directory must not be in use by a running server; as at any start, the
// log gets a fresh segment. `zoo export` uses it.
func Recover(cfg Config) (*txn.State, int64, error) {
	if cfg.Dir == "" {
		return nil, 0, fmt.Errorf("replica: recover: no log directory")
	}
	if Fresh(cfg) {
		return nil, 0, fmt.Errorf("replica: recover: %s holds no log", cfg.Dir)
	}
	st := txn.NewState(tree.New())
	cfg.State = st
	cfg.Prep = txn.NewPrepper(st, txn.PrepConfig{})
	if cfg.OnApply == nil {
		cfg.OnApply = func(Event) {}
	}
	if cfg.ID == 0 {
		cfg.ID = 1
	}
	r, err := New(cfg)
	if err != nil {
		return nil, 0, err
	}
	defer r.closeLog()
	var zxid int64
	r.Read(func(_ *txn.State, z int64) { zxid = z })
	return st, zxid, nil
}
