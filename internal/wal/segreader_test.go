package wal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

// TestRecoveryReadsWhatWasWritten: Open and ReadFrom read the records of
// each segment and a bounded window of its zeroed preallocated tail, not
// the whole preallocated segment, so restart time does not grow with it.
func TestRecoveryReadsWhatWasWritten(t *testing.T) {
	const segSize, segs, n = 8 << 20, 3, 3000
	mem := vfs.NewMem()
	written := writeSegments(t, mem, "wal", segSize, segs, n, 100)
	fs := &countFS{FS: mem}
	w, st, err := Open(fs, "wal", Options{SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(st.Entries) != n || st.LastIndex() != n {
		t.Fatalf("recovered %d entries up to %d, want %d", len(st.Entries), st.LastIndex(), n)
	}
	names, err := mem.List("wal")
	if err != nil || len(names) != segs {
		t.Fatalf("segments %v (%v), want %d", names, err, segs)
	}
	limit := written + segs*(zeroWindow+readBufSize)
	if got := fs.read.Load(); got < written || got > limit {
		t.Fatalf("Open read %d bytes of %d written in %d segments of %d; want %d to %d",
			got, written, segs, segSize, written, limit)
	}
	fs.read.Store(0)
	if _, err := w.ReadFrom(0); err == nil {
		t.Fatal("ReadFrom(0) of a log without markers succeeded")
	}
	if got := fs.read.Load(); got < written || got > limit {
		t.Fatalf("ReadFrom read %d bytes of %d written; want %d to %d", got, written, written, limit)
	}
}

// TestHoleBeforeRecordFailsOpen: a zeroed hole in the last segment
// followed by a valid record within the window recovery checks is
// corruption, not the end of the log: records after the hole were written
// and may have been acknowledged.
func TestHoleBeforeRecordFailsOpen(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(vfs.Default, dir, Options{SegmentSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ents := []raftpb.Entry{{Index: 1, Term: 1, Data: []byte("a")}, {Index: 2, Term: 1, Data: []byte("b")}}
	if err := w.Save(raftpb.HardState{Term: 1, Commit: 2}, ents); err != nil {
		t.Fatal(err)
	}
	end := w.off
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	if len(names) != 1 {
		t.Fatalf("segments %v, want one", names)
	}
	later := appendProtoRecord(nil, typeEntry, &raftpb.Entry{Index: 3, Term: 1, Data: []byte("c")})
	f, err := os.OpenFile(names[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(later, end+zeroWindow/2)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(vfs.Default, dir, Options{SegmentSize: 4 << 20}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a log with a hole before a record: %v, want ErrCorrupt", err)
	}
}

// FuzzReadSegment checks that streaming a segment finds what scan finds
// in its bytes (segments shorter than zeroWindow, so that the window
// covers all of the tail), and that ValidPrefixReader agrees with
// ValidPrefix.
func FuzzReadSegment(f *testing.F) {
	a := appendRecord(nil, typeEntry, []byte("abc"))
	f.Add(segV2(a))
	f.Add(segV2(a, a, make([]byte, 40)))
	f.Add(segV2(a, make([]byte, 20), a))
	f.Add(segV2(a, a[:len(a)-2], make([]byte, 20)))
	f.Add(segV2(appendRecord(appendRecord(nil, typeHardState, []byte{8, 1}), typeSnapshotMark, nil)))
	a1 := appendRecordV1(nil, typeEntry, []byte("abc"))
	f.Add(concat(a1, a1, make([]byte, 40)))
	f.Add(concat(a1, make([]byte, 20), a1))
	f.Add(concat(a1, a1[:len(a1)-2], make([]byte, 20)))
	f.Add(make([]byte, 30))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > zeroWindow {
			return
		}
		fs := vfs.NewMem()
		wf, err := fs.Create("seg")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wf.Write(data); err != nil {
			t.Fatal(err)
		}
		_ = wf.Close()
		var got []record
		r, err := readSegment(fs, "seg", func(rec record) error {
			rec.payload = bytes.Clone(rec.payload)
			got = append(got, rec)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := scan(data)
		if r.end != want.end || !errors.Is(r.bad, want.bad) || (r.bad == nil) != (want.bad == nil) || r.corrupt != want.corrupt {
			t.Fatalf("readSegment: end %d bad %v corrupt %v; scan: end %d bad %v corrupt %v",
				r.end, r.bad, r.corrupt, want.end, want.bad, want.corrupt)
		}
		if r.bad != nil && !r.corrupt && !bytes.Equal(r.tail, data[r.end:]) {
			t.Fatalf("tail %x, want %x", r.tail, data[r.end:])
		}
		if len(got) != len(want.records) {
			t.Fatalf("%d records, scan has %d", len(got), len(want.records))
		}
		for i, rec := range got {
			w := want.records[i]
			if rec.typ != w.typ || rec.off != w.off || !bytes.Equal(rec.payload, w.payload) {
				t.Fatalf("record %d: %v at %d, scan: %v at %d", i, rec.typ, rec.off, w.typ, w.off)
			}
		}
		if n, err := ValidPrefixReader(bytes.NewReader(data), int64(len(data))); err != nil || n != ValidPrefix(data) {
			t.Fatalf("ValidPrefixReader = %d, %v; ValidPrefix = %d", n, err, ValidPrefix(data))
		}
	})
}

// TestReadErrorFailsOpen: a read error in the middle of a segment fails
// Open with that error, rather than being taken as the end of the log, and
// cuts nothing: the next Open recovers every entry.
func TestReadErrorFailsOpen(t *testing.T) {
	const n = 2000
	mem := vfs.NewMem()
	writeSegments(t, mem, "wal", 4<<20, 1, n, 100)
	errRead := errors.New("injected read error")
	reads := 0
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileRead {
			if reads++; reads == 3 {
				return errRead
			}
		}
		return nil
	}))
	if _, _, err := Open(fs, "wal", Options{SegmentSize: 4 << 20}); !errors.Is(err, errRead) {
		t.Fatalf("Open with a failing read: %v, want %v", err, errRead)
	}
	if reads < 3 {
		t.Fatalf("Open read %d times; the test needs a segment of more than 2 buffers", reads)
	}
	w, st, err := Open(mem, "wal", Options{SegmentSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(st.Entries) != n {
		t.Fatalf("recovered %d entries after the failed Open, want %d", len(st.Entries), n)
	}
}
