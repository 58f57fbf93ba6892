package backup

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
)

// ErrTarget means the restore point cannot be reached from the backup.
var ErrTarget = errors.New("backup: restore point outside the backup")

// Target is how far to restore: the zero value is the backup's end.
type Target struct {
	Zxid int64 // apply txns up to and including this zxid (0: no limit)
	Time int64 // apply txns whose time (ms since the epoch) is at most this (0: no limit)
}

// RestoreOptions tune Restore.
type RestoreOptions struct {
	Target Target
	// Voters and Learners are the membership of the restored directory;
	// none: a standalone server with id 1.
	Voters, Learners []uint64
	// Membership, if set, replaces /zookeeper/config: the zoo.cfg
	// server lines the restored ensemble runs with, which must name the
	// same members as Voters and Learners.
	Membership  []byte
	Compression snap.Compression
}

// Restored describes a restore.
type Restored struct {
	Snapshot snap.Meta
	Zxid     int64 // the last txn applied
	Txns     int   // applied after the snapshot
	Nodes    int
	Sessions int
	// End is the last committed zxid the backup holds.
	End int64
}

// Restore reads a backup from r into scratch (a directory it may fill)
// and writes the restored data directory into dst (log/ and snap/ under
// it), which must hold no log.
func Restore(r io.Reader, fs vfs.FS, scratch, dst string, opts RestoreOptions) (Restored, error) {
	var out Restored
	if err := extract(r, fs, scratch); err != nil {
		return out, err
	}
	snapDir, logDir := filepath.Join(scratch, "snap"), filepath.Join(scratch, "log")
	meta, st, _, err := snap.Load(fs, snapDir, snap.Options{})
	if err != nil {
		return out, fmt.Errorf("backup: %w", err)
	}
	out.Snapshot = meta
	w, ws, err := wal.Open(fs, logDir, wal.Options{SegmentSize: 64 << 10})
	if err != nil {
		return out, fmt.Errorf("backup: %w", err)
	}
	if ws.Snapshot.Index > meta.Index {
		// The log's newest marker is a later snapshot than the file (one
		// finished after the backup chose its file): read the entries
		// after the file's. A marker older than the file (the file was
		// renamed into place before its marker was logged) is fine: the
		// log holds every entry after it, the file's among them.
		ws, err = w.ReadFrom(meta.Index)
	}
	w.Close()
	if err != nil {
		return out, fmt.Errorf("backup: the log after the snapshot at %d: %w", meta.Index, err)
	}
	out.End = int64(min(ws.HardState.Commit, ws.LastIndex()))
	t := opts.Target
	if t.Zxid != 0 && (t.Zxid < int64(meta.Index) || t.Zxid > out.End) {
		return out, fmt.Errorf("%w: zxid %d is not between the snapshot's %d and the last committed %d",
			ErrTarget, t.Zxid, meta.Index, out.End)
	}
	last, term := int64(meta.Index), meta.Term
	for _, e := range ws.Entries {
		if e.Index <= meta.Index {
			continue
		}
		if int64(e.Index) > out.End || t.Zxid != 0 && int64(e.Index) > t.Zxid {
			break
		}
		tx, err := entryTxn(e)
		if err != nil {
			return out, fmt.Errorf("backup: entry %d: %w", e.Index, err)
		}
		if tx != nil && t.Time != 0 && tx.Time > t.Time {
			break
		}
		if tx != nil {
			txn.Apply(st, tx, int64(e.Index))
			out.Txns++
		}
		last, term = int64(e.Index), e.Term
	}
	if t.Time != 0 && last == int64(meta.Index) && meta.Index > 0 {
		// Nothing after the snapshot is old enough: the snapshot itself
		// may be newer than the time asked for.
		return out, fmt.Errorf("%w: no txn after the snapshot at %d is at or before time %d", ErrTarget, meta.Index, t.Time)
	}
	if opts.Membership != nil {
		if _, err := st.Tree.SetData(tree.ConfigPath, opts.Membership, -1, last, 0); err != nil {
			return out, fmt.Errorf("backup: membership: %w", err)
		}
	}
	out.Zxid, out.Nodes, out.Sessions = last, st.Tree.NodeCount(), len(st.Sessions)
	voters := opts.Voters
	if len(voters) == 0 && len(opts.Learners) == 0 {
		voters = []uint64{1}
	}
	err = replica.Seed(fs, filepath.Join(dst, "log"), filepath.Join(dst, "snap"), st, replica.SeedOptions{
		Index: uint64(last), Term: max(term, 1), Voters: voters, Learners: opts.Learners, Compression: opts.Compression,
	})
	return out, err
}

// entryTxn decodes the txn of a log entry; nil for an entry without one
// (a new leader's empty entry, a membership change without a reconfig).
func entryTxn(e raftpb.Entry) (*txn.Txn, error) {
	data := e.Data
	switch e.Type {
	case raftpb.EntryNormal:
	case raftpb.EntryConfChange:
		var cc raftpb.ConfChange
		if err := cc.Unmarshal(e.Data); err != nil {
			return nil, err
		}
		data = cc.Context
	case raftpb.EntryConfChangeV2:
		var cc raftpb.ConfChangeV2
		if err := cc.Unmarshal(e.Data); err != nil {
			return nil, err
		}
		data = cc.Context
	default:
		return nil, nil
	}
	if len(data) == 0 {
		return nil, nil
	}
	_, _, body, err := replica.OpenEnvelope(data)
	if err != nil {
		return nil, err
	}
	return txn.Unmarshal(body)
}

// extract unpacks a backup into dir: snap/ and log/ only.
func extract(r io.Reader, fs vfs.FS, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("backup: not a backup: %w", err)
	}
	tr := tar.NewReader(gz)
	for _, d := range []string{"snap", "log"} {
		if err := fs.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("backup: reading the archive: %w", err)
		}
		sub, name := path.Split(path.Clean(h.Name))
		if (sub != "snap/" && sub != "log/") || name == "" || strings.HasPrefix(name, ".") || h.Typeflag != tar.TypeReg {
			return fmt.Errorf("backup: unexpected entry %q in the archive", h.Name)
		}
		f, err := fs.Create(filepath.Join(dir, sub, name))
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("backup: %s: %w", h.Name, err)
		}
	}
}
