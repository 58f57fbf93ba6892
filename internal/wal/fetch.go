package wal

import (
	"errors"
	"fmt"
	"io"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// fetchAhead is how much a read of entries back from the log reads at a
// time: the records of consecutive entries lie one after another.
const fetchAhead = 64 << 10

// errNotEntry is the Reason of a CorruptionError for a record read back
// by its loc that is not the entry the loc was taken for.
var errNotEntry = errors.New("the record is not the entry expected there")

// fetch reads back, in order, the entries first, first+1, ... whose slots
// are given, appending them to dst. Their records were written by this
// WAL (or recovered by Open) and their segments are not released (the
// Storage releases no segment that holds an entry after its base). A
// record that is not what was written there is corruption.
func (w *WAL) fetch(first uint64, slots []slot, dst []raftpb.Entry) ([]raftpb.Entry, error) {
	var r segmentFetcher
	defer r.close()
	for i, sl := range slots {
		idx := first + uint64(i)
		if !sl.known() {
			return dst, fmt.Errorf("wal: entry %d is not held and its place in the log is unknown", idx)
		}
		if r.f == nil || r.seg != sl.seg {
			if err := r.open(w, sl.seg); err != nil {
				return dst, err
			}
		}
		p, err := r.record(int64(sl.off))
		if err != nil {
			return dst, err
		}
		var e raftpb.Entry
		if err := e.Unmarshal(p); err != nil {
			return dst, &CorruptionError{File: r.name, Offset: int64(sl.off), Reason: fmt.Errorf("decode entry: %w", err)}
		}
		if e.Index != idx {
			return dst, &CorruptionError{File: r.name, Offset: int64(sl.off), Reason: fmt.Errorf("%w: entry %d, want %d", errNotEntry, e.Index, idx)}
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// segmentFetcher reads records of one segment at given offsets, through a
// window of the file.
type segmentFetcher struct {
	seg  uint32
	name string
	f    vfs.File
	fr   frame
	buf  []byte // the window: the file's bytes from at
	at   int64
}

// open makes segment seq the one read.
func (r *segmentFetcher) open(w *WAL, seq uint32) error {
	r.close()
	name, err := w.segmentPath(uint64(seq))
	if err != nil {
		return err
	}
	f, err := w.fs.Open(name)
	if err != nil {
		return fmt.Errorf("wal: read back entries: %w", err)
	}
	r.seg, r.name, r.f = seq, name, f
	if err := r.window(0, magicSize); err != nil {
		return err
	}
	r.fr, _ = frameOf(r.buf)
	return nil
}

func (r *segmentFetcher) close() {
	if r.f != nil {
		_ = r.f.Close() // read-only
		r.f = nil
	}
	r.buf = r.buf[:0]
}

// record returns the payload of the record at off, aliasing the window.
func (r *segmentFetcher) record(off int64) ([]byte, error) {
	h := r.fr.headerSize()
	if err := r.window(off, h); err != nil {
		return nil, err
	}
	typ, n, err := r.fr.parseHeader(r.buf[off-r.at:][:h])
	if err == nil && typ != typeEntry {
		err = fmt.Errorf("%w: a %v record", errNotEntry, typ)
	}
	if err != nil {
		return nil, &CorruptionError{File: r.name, Offset: off, Reason: err}
	}
	size := h + int(n)
	if err := r.window(off, size); err != nil {
		return nil, err
	}
	rec := r.buf[off-r.at:][:size] // the window may have moved: slice again
	p, err := r.fr.checkBody(rec[:h], rec[h:])
	if err != nil {
		return nil, &CorruptionError{File: r.name, Offset: off, Reason: err}
	}
	return p, nil
}

// window makes the window hold the n bytes at off, reading ahead.
func (r *segmentFetcher) window(off int64, n int) error {
	if off >= r.at && off+int64(n) <= r.at+int64(len(r.buf)) {
		return nil
	}
	want := max(n, fetchAhead)
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	got, err := r.f.ReadAt(r.buf[:want], off)
	r.buf, r.at = r.buf[:got], off
	switch {
	case got >= n:
		return nil
	case err == nil || errors.Is(err, io.EOF):
		return &CorruptionError{File: r.name, Offset: off, Reason: errTooLong}
	default:
		return fmt.Errorf("wal: read back entries from %s at %d: %w", r.name, off, err)
	}
}

// segmentPath returns the path of live segment seq.
func (w *WAL) segmentPath(seq uint64) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.segs) == 0 || seq < w.segs[0].seq || seq > w.segs[len(w.segs)-1].seq {
		return "", fmt.Errorf("wal: read back entries: segment %d was released", seq)
	}
	return w.path(w.segs[seq-w.segs[0].seq].name()), nil
}
