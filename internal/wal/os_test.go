package wal

import (
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// TestOSTornTail runs recovery on the real file system: preallocated
// segments, fdatasync, and a torn record written past the last good one.
func TestOSTornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	opts := Options{SegmentSize: 1 << 20}
	w, _, err := Open(vfs.Default, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := raftpb.HardState{Term: 2, Vote: 1, Commit: 3}
	mustSave(t, w, hs, mkEnts(1, 3, 2))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := vfs.Default.List(dir)
	seg := filepath.Join(dir, names[len(names)-1])
	if fi, err := os.Stat(seg); err != nil || fi.Size() != opts.SegmentSize {
		t.Fatalf("segment not preallocated: %v %v", fi, err)
	}
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	end := scan(data).end
	torn := appendProtoRecord(nil, typeEntry, &mkEnts(4, 4, 2)[0])
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(torn[:len(torn)-4], end); err != nil {
		t.Fatal(err)
	}
	f.Close()

	w, st, err := Open(vfs.Default, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkState(t, st, State{HardState: hs, Entries: mkEnts(1, 3, 2)})
	mustSave(t, w, raftpb.HardState{}, mkEnts(4, 4, 3))
	w.Close()
	if b, err := os.ReadFile(seg + ".broken"); err != nil || len(b) != len(torn)-4 {
		t.Fatalf(".broken holds %d bytes (%v), want %d", len(b), err, len(torn)-4)
	}
	w, st, err = Open(vfs.Default, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	checkState(t, st, State{HardState: hs, Entries: append(mkEnts(1, 3, 2), mkEnts(4, 4, 3)...)})
}
