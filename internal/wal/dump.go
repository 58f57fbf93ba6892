package wal

import (
	"errors"
	"fmt"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// ErrTornTail marks a log whose last segment ends in a torn record: what a
// crash in the middle of a write leaves, which Open would cut. Scan reports
// it as a *TornTailError.
var ErrTornTail = errors.New("wal: torn tail")

// TornTailError says where the torn tail of a log starts. It matches
// ErrTornTail.
type TornTailError struct {
	File   string
	Offset int64
	Reason error
}

func (e *TornTailError) Error() string {
	return fmt.Sprintf("wal: torn tail: %s at offset %d: %v", e.File, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrTornTail) hold.
func (e *TornTailError) Is(target error) bool { return target == ErrTornTail }

// Unwrap returns the reason.
func (e *TornTailError) Unwrap() error { return e.Reason }

// Record is one record of a segment as Scan reports it; exactly one of
// Entry, HardState and Snapshot is set.
type Record struct {
	File      string // the segment's path
	Offset    int64  // where the record starts in it
	Size      int64  // its size there, framing included
	Entry     *raftpb.Entry
	HardState *raftpb.HardState
	Snapshot  *raftpb.SnapshotMetadata
	// Received marks a Snapshot received from a leader.
	Received bool
}

// Kind names the record's type: "entry", "hard-state",
// "snapshot-marker" or "received-snapshot-marker".
func (r *Record) Kind() string {
	switch {
	case r.Entry != nil:
		return typeEntry.String()
	case r.HardState != nil:
		return typeHardState.String()
	case r.Received:
		return typeReceivedSnap.String()
	default:
		return typeSnapshotMark.String()
	}
}

// Scan reads the segments in dir oldest first and calls fn for every
// record, in log order, without changing anything: unlike Open it cuts no
// torn tail, removes no temp file and adds no segment, so it is safe on the
// log of a stopped server (a tool's view, e.g. zoo log dump). It reports
// records as stored, before replay drops the entries a later snapshot
// marker or a raft truncation superseded.
//
// Scan stops at the first bad record: a *CorruptionError, or a
// *TornTailError if it ends the last segment and Open would cut it. An
// error from fn stops Scan and is returned as is.
func Scan(fs vfs.FS, dir string, fn func(Record) error) error {
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("wal: scan %s: %w", dir, err)
	}
	var segs []segment
	for _, name := range names {
		if s, ok := parseSegmentName(name); ok { // not .tmp, .broken

			segs = append(segs, s)
		}
	}
	w := &WAL{fs: fs, dir: dir}
	for i, s := range segs {
		if i > 0 && s.seq != segs[i-1].seq+1 {
			return &CorruptionError{File: w.path(segs[i-1].name()),
				Reason: fmt.Errorf("next segment is %s: segment %d is missing", s.name(), segs[i-1].seq+1)}
		}
		if err := scanSegment(w, s, i == len(segs)-1, fn); err != nil {
			return err
		}
	}
	return nil
}

func scanSegment(w *WAL, s segment, last bool, fn func(Record) error) error {
	name := filepath.Join(w.dir, s.name())
	r, err := readSegment(w.fs, name, func(rec record) error {
		out, err := decodeForScan(rec)
		if err != nil {
			return &CorruptionError{File: name, Offset: rec.off, Reason: err}
		}
		out.File = name
		return fn(out)
	})
	if err != nil {
		return err
	}
	switch {
	case r.bad == nil:
		return nil
	case r.corrupt || !last:
		return &CorruptionError{File: name, Offset: r.end, Reason: r.bad}
	default:
		return &TornTailError{File: name, Offset: r.end, Reason: r.bad}
	}
}

func decodeForScan(rec record) (Record, error) {
	out := Record{Offset: rec.off, Size: rec.size}
	switch rec.typ {
	case typeEntry:
		out.Entry = new(raftpb.Entry)
		if err := out.Entry.Unmarshal(rec.payload); err != nil {
			return out, fmt.Errorf("decode entry: %w", err)
		}
	case typeHardState:
		out.HardState = new(raftpb.HardState)
		if err := out.HardState.Unmarshal(rec.payload); err != nil {
			return out, fmt.Errorf("decode hard state: %w", err)
		}
	case typeSnapshotMark, typeReceivedSnap:
		out.Received = rec.typ == typeReceivedSnap
		out.Snapshot = new(raftpb.SnapshotMetadata)
		if err := out.Snapshot.Unmarshal(rec.payload); err != nil {
			return out, fmt.Errorf("decode snapshot marker: %w", err)
		}
	default:
		return out, fmt.Errorf("unexpected record type %v", rec.typ)
	}
	return out, nil
}
