package replica

import (
	"errors"
	"testing"

	"github.com/zoohq/zoo/internal/vfs"
)

// countSyncs is a file that counts its syncs and fails them with err.
type countSyncs struct {
	vfs.File
	syncs int
	err   error
}

func (f *countSyncs) Sync() error { f.syncs++; return f.err }

// A snapshot file is synced every snapSyncEvery bytes while it is written,
// so the page cache never holds more than that of it for the disk to take
// at once (and the log's fsyncs never queue behind hundreds of MB).
func TestWritebackSyncsInChunks(t *testing.T) {
	fs := writebackFS{FS: vfs.NewMem(), every: 1 << 20}
	f, err := fs.Create("snap")
	if err != nil {
		t.Fatal(err)
	}
	wf := f.(*writebackFile)
	counter := &countSyncs{File: wf.File}
	wf.File = counter
	chunk := make([]byte, 64<<10)
	for range 10 * (1 << 20) / len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if counter.syncs != 10 {
		t.Errorf("10 MiB written with a sync every 1 MiB: %d syncs, want 10", counter.syncs)
	}
	if _, err := f.Write(chunk[:100]); err != nil || counter.syncs != 10 {
		t.Errorf("100 bytes more: %d syncs, err %v; want no sync", counter.syncs, err)
	}

	boom := errors.New("disk gone")
	counter.err = boom
	var werr error
	for i := 0; i < 32 && werr == nil; i++ {
		_, werr = f.Write(chunk)
	}
	if !errors.Is(werr, boom) {
		t.Errorf("a failed sync: write returned %v, want %v", werr, boom)
	}
}
