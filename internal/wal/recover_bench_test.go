package wal

import (
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// countFS counts the bytes read through the files it opens, so that a
// test can tell how much of a segment recovery read.
type countFS struct {
	vfs.FS
	read atomic.Int64
}

func (c *countFS) Open(name string) (vfs.File, error) { return c.wrap(c.FS.Open(name)) }

func (c *countFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.wrap(c.FS.OpenReadWrite(name))
}

func (c *countFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	cf := &countFile{File: f, read: &c.read}
	if s, ok := f.(io.Seeker); ok {
		// Keep the seek that reopen uses: without it, it reads up to
		// the end of the records again.
		return &countSeekFile{countFile: cf, Seeker: s}, nil
	}
	return cf, nil
}

type countSeekFile struct {
	*countFile
	io.Seeker
}

type countFile struct {
	vfs.File
	read *atomic.Int64
}

func (f *countFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read.Add(int64(n))
	return n, err
}

func (f *countFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.read.Add(int64(n))
	return n, err
}

// writeSegments writes n entries of size bytes into segs preallocated
// segments in dir, cutting a new segment after each n/segs entries, and
// returns the bytes of records written.
func writeSegments(tb testing.TB, fs vfs.FS, dir string, segSize int64, segs, n, size int) int64 {
	tb.Helper()
	w, _, err := Open(fs, dir, Options{SegmentSize: segSize, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, size)
	var written int64
	for s := range segs {
		if s > 0 {
			w.mu.Lock()
			err := w.cut(segment{seq: w.segs[len(w.segs)-1].seq + 1, first: w.lastIndex + 1})
			written += w.off
			w.mu.Unlock()
			if err != nil {
				tb.Fatal(err)
			}
		}
		for range n / segs {
			i := w.lastIndex + 1
			e := raftpb.Entry{Index: i, Term: 1, Data: data}
			if err := w.Save(raftpb.HardState{Term: 1, Commit: i}, []raftpb.Entry{e}); err != nil {
				tb.Fatal(err)
			}
			written += int64(recordOverhead + e.Size())
			written += int64(recordOverhead + (&raftpb.HardState{Term: 1, Commit: i}).Size())
		}
	}
	return written
}

// BenchmarkRecover measures Open of a log of 1 and 4 preallocated 64 MiB
// segments on the os file system holding 10,000 entries of 100 bytes, and
// reports the bytes recovery read: it should follow the records written,
// not the segments preallocated.
func BenchmarkRecover(b *testing.B) {
	for _, segs := range []int{1, 4} {
		b.Run(fmt.Sprintf("segments=%d", segs), func(b *testing.B) {
			const n = 10000
			dir := b.TempDir()
			written := writeSegments(b, vfs.Default, dir, DefaultSegmentSize, segs, n, 100)
			fs := &countFS{FS: vfs.Default}
			b.ResetTimer()
			for b.Loop() {
				w, st, err := Open(fs, dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if len(st.Entries) != n {
					b.Fatalf("recovered %d entries, want %d", len(st.Entries), n)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fs.read.Load())/float64(b.N), "B-read/op")
			b.ReportMetric(float64(written), "B-written")
		})
	}
}

// writeCovered writes n entries of size bytes in four segments, then a
// snapshot marker at the last of them and a cut: a log the newest
// snapshot covers whole, as a server's is after a snapshot (the segments
// stay for older markers until they are released).
func writeCovered(tb testing.TB, fs vfs.FS, dir string, n, size int) {
	tb.Helper()
	writeSegments(tb, fs, dir, 1<<20, 4, n, size)
	w, _, err := Open(fs, dir, Options{SegmentSize: 1 << 20, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	if err := w.SaveSnapshotMarker(raftpb.SnapshotMetadata{Index: w.lastIndex, Term: 1}); err != nil {
		tb.Fatal(err)
	}
	w.mu.Lock()
	err = w.cut(segment{seq: w.segs[len(w.segs)-1].seq + 1, first: w.lastIndex + 1})
	w.mu.Unlock()
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRecoverCovered measures Open of 20,000 entries of 100 bytes
// that the newest snapshot covers: recovery reads them (their checksums)
// but need not decode or keep them.
func BenchmarkRecoverCovered(b *testing.B) {
	const n = 20000
	dir := b.TempDir()
	writeCovered(b, vfs.Default, dir, n, 100)
	b.ReportAllocs()
	for b.Loop() {
		w, st, err := Open(vfs.Default, dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Entries) != 0 || st.Snapshot.Index != n {
			b.Fatalf("recovered %d entries after the snapshot at %d; want none after %d", len(st.Entries), st.Snapshot.Index, n)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
