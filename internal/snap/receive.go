package snap

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/zoohq/zoo/internal/txn"
)

// Receive stores a snapshot file sent by another server (the bytes of a
// file Create or Write made) as the snapshot at index in dir, and returns
// its verified content. The bytes go to a temp file that is synced,
// verified and only then renamed into place, so a crash or a broken
// stream leaves no file that Load would take for a snapshot. A file whose
// header names another index is refused.
func Receive(fs FS, dir string, index uint64, r io.Reader, opts Options) (Meta, *txn.State, error) {
	name := Name(index)
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := fs.Create(tmp)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("snap: receive %s: %w", name, err)
	}
	m, st, err := receiveInto(f, index, r, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = fs.Remove(tmp) // best effort: Load removes it too
		return Meta{}, nil, fmt.Errorf("snap: receive %s: %w", name, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return Meta{}, nil, fmt.Errorf("snap: sync dir after %s: %w", name, err)
	}
	return m, st, nil
}

// receiveInto copies r into f, syncs it and reads it back.
func receiveInto(f File, index uint64, r io.Reader, opts Options) (Meta, *txn.State, error) {
	size, err := io.Copy(f, r)
	if err != nil {
		return Meta{}, nil, err
	}
	if err := f.Sync(); err != nil {
		return Meta{}, nil, err
	}
	return readIndex(f, size, index, opts)
}

// ReadBytes decodes and verifies a snapshot held in memory, which must be
// the one at index.
func ReadBytes(b []byte, index uint64, opts Options) (Meta, *txn.State, error) {
	return readIndex(bytes.NewReader(b), int64(len(b)), index, opts)
}

func readIndex(r io.ReaderAt, size int64, index uint64, opts Options) (Meta, *txn.State, error) {
	m, st, err := Read(r, size, opts)
	if err != nil {
		return Meta{}, nil, err
	}
	if m.Index != index {
		return Meta{}, nil, fmt.Errorf("%w: the file is the snapshot at %d, not %d", ErrMalformed, m.Index, index)
	}
	return m, st, nil
}
