package replica

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// newAt builds (without running) a replica with its log in logDir and
// snapshots in snapDir on fs.
func newAt(fs vfs.FS, logDir, snapDir string) (*Replica, error) {
	state := txn.NewState(tree.New())
	r, err := New(Config{
		State: state, Prep: txn.NewPrepper(state, txn.PrepConfig{}),
		OnApply: func(Event) {}, Now: func() int64 { return 1000 },
		FS: fs, Dir: logDir, SnapDir: snapDir, SegmentSize: 64 << 10,
	})
	if err == nil {
		r.closeLog()
	}
	return r, err
}

func touch(t *testing.T, fs vfs.FS, path string) {
	t.Helper()
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("ZKSN not zoo's")); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestRefusesDataItCannotStartFrom: a data directory that holds data Zoo
// would not load must stop the server with an error that names what it
// found and what to run, never start with an empty tree.
func TestRefusesDataItCannotStartFrom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		logDir string
		files  []string
		want   []string // substrings of the error
	}{
		{"apache version-2 in dataDir", "/data/log", []string{"/data/version-2/snapshot.100000000", "/data/version-2/log.1"},
			[]string{"version-2", "zoo import /data"}},
		{"apache version-2 in dataLogDir", "/txnlogs/log", []string{"/txnlogs/version-2/log.1"},
			[]string{"/txnlogs", "version-2", "zoo import"}},
		{"apache files directly in dataDir", "/data/log", []string{"/data/snapshot.1a", "/data/log.1"},
			[]string{"snapshot.1a", "log.1", "zoo import"}},
		{"unknown file in the log directory", "/data/log", []string{"/data/log/segment.bin"},
			[]string{"/data/log", "segment.bin", "cannot read"}},
		{"apache snapshot in the snapshot directory", "/data/log", []string{"/data/snap/snapshot.5.gz"},
			[]string{"snapshot.5.gz", "zoo import /data/snap"}},
		{"snapshots without a log", "/data/log", []string{"/data/snap/snap.0000000000000064"},
			[]string{"snap.0000000000000064", "no log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			for _, f := range tc.files {
				touch(t, fs, f)
			}
			_, err := newAt(fs, tc.logDir, "/data/snap")
			if !errors.Is(err, ErrForeignData) {
				t.Fatalf("New = %v, want ErrForeignData", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// Nothing was written beside the foreign data.
			if names, _ := fs.List(tc.logDir); len(names) > 0 && !strings.Contains(tc.name, "log directory") {
				t.Errorf("log directory written: %v", names)
			}
		})
	}
}

// TestSnapshotsWithoutTheirLogRefused: a real data directory whose log
// was lost does not restart empty beside its snapshots.
func TestSnapshotsWithoutTheirLogRefused(t *testing.T) {
	fs := vfs.NewMem()
	d := startDurable(t, fs, 10)
	d.write(t, workload(30)...)
	d.stop()
	if snaps, _ := fs.List(snapDir); len(snaps) < 2 {
		t.Fatalf("snapshots %v: want some beyond the bootstrap's", snaps)
	}
	names, err := fs.List(logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := fs.Remove(filepath.Join(logDir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := newAt(fs, logDir, snapDir); !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), "no log") {
		t.Fatalf("New after the log was removed = %v, want ErrForeignData (no log)", err)
	}
}

// TestZooDataDirStillStarts: Zoo's own files, myid and a data directory
// that other tools share pass the check.
func TestZooDataDirStillStarts(t *testing.T) {
	fs := vfs.NewMem()
	touch(t, fs, "/data/myid")
	touch(t, fs, "/data/zookeeper_server.pid")
	d := startDurable(t, fs, 10)
	d.write(t, workload(3)...)
	d.stop()
	if _, err := newAt(fs, logDir, snapDir); err != nil {
		t.Fatalf("restart on Zoo's own data directory: %v", err)
	}
}
