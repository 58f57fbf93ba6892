package wal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// scanAll returns what Scan reports for dir.
func scanAll(dir string) ([]Record, error) {
	var recs []Record
	err := Scan(vfs.Default, dir, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

// writeLog writes a small log in a temp dir: a snapshot marker, entries
// 1..5 and a HardState. It returns the dir.
func writeLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, _, err := Open(vfs.Default, dir, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, w, raftpb.HardState{Term: 1, Commit: 5}, mkEnts(1, 5, 1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func patch(t *testing.T, name string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// Scan reports every record in order and changes nothing; a torn tail and
// corruption come back as typed errors with file and offset.
func TestScan(t *testing.T) {
	dir := writeLog(t)
	recs, err := scanAll(dir)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var ents []uint64
	var last Record
	for _, r := range recs {
		if r.Entry != nil {
			ents = append(ents, r.Entry.Index)
			last = r
		}
	}
	if len(ents) != 5 || ents[0] != 1 || ents[4] != 5 {
		t.Fatalf("entries %v; want 1..5", ents)
	}
	if recs[0].Kind() != "snapshot-marker" || recs[1].Kind() != "hard-state" {
		t.Fatalf("segment starts with %s, %s; want its header records", recs[0].Kind(), recs[1].Kind())
	}
	hs := recs[len(recs)-1]
	if hs.HardState == nil || hs.Offset < last.Offset {
		t.Fatalf("last record is a %s; want the HardState after the entries", hs.Kind())
	}
	if want := recordOverhead + int64(hs.HardState.Size()); hs.Size != want {
		t.Fatalf("the HardState record's Size is %d; want %d", hs.Size, want)
	}
	end := hs.Offset + hs.Size

	tests := []struct {
		name string
		off  int64
		b    []byte
		want error
	}{
		{"torn tail", end, []byte{1, 2, 3, 4, 5}, ErrTornTail},
		{"corrupt entry", recs[2].Offset + headerSize + 1, []byte{0xff, 0xfe}, ErrCorrupt},
		// The HardState was written whole (and fsynced): damage to it,
		// though nothing follows it, is corruption, not a torn tail.
		{"corrupt last record", hs.Offset + headerSize, []byte{0xff}, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeLog(t)
			names, _ := vfs.Default.List(dir)
			if len(names) != 1 {
				t.Fatalf("log holds %v; want one segment", names)
			}
			seg := filepath.Join(dir, names[0])
			patch(t, seg, tc.off, tc.b)
			_, err := scanAll(dir)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Scan: %v; want %v", err, tc.want)
			}
			var te *TornTailError
			var ce *CorruptionError
			switch {
			case errors.As(err, &te):
				if te.Offset != tc.off || te.File != seg {
					t.Fatalf("torn tail at %s:%d; want %s:%d", te.File, te.Offset, seg, tc.off)
				}
			case errors.As(err, &ce):
				if ce.File != seg {
					t.Fatalf("corruption in %s; want %s", ce.File, seg)
				}
			}
		})
	}
}
