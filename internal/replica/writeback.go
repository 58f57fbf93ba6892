package replica

import (
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/vfs"
)

// snapSyncEvery is how many bytes of a snapshot file may be written
// before they are synced. Left to the kernel, a large snapshot piles up
// in the page cache as dirty pages (hundreds of MB at a few million
// znodes) and goes to disk in bursts, the largest at the final fsync;
// the log's fsyncs, which every write waits for, then queue behind them.
// Synced in chunks, the snapshot never has more than this much for the
// disk to take at once. Snapshots are written off the apply path, so the
// writer's waits cost the clients nothing.
const snapSyncEvery = 4 << 20

// writebackFS is a snapshot directory's file system whose new files sync
// every `every` bytes written (bounded write-back).
type writebackFS struct {
	vfs.FS
	every int64
}

// Create implements snap.FS.
func (fs writebackFS) Create(name string) (snap.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &writebackFile{File: f, every: fs.every}, nil
}

// writebackFile syncs itself every `every` bytes written. A failed sync
// fails the write, and with it the snapshot, which is then retried.
type writebackFile struct {
	vfs.File
	every    int64
	unsynced int64
}

func (f *writebackFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.unsynced += int64(n)
	if err == nil && f.unsynced >= f.every {
		err = f.Sync()
	}
	return n, err
}

func (f *writebackFile) Sync() error {
	f.unsynced = 0
	return f.File.Sync()
}
