package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/zoohq/zoo/internal/vfs"
)

// A run's sequence numbers must never meet an earlier run's. Requests the
// previous run forwarded may still be applied after a restart (the leader
// had them when this server went down), and such an entry, carrying this
// server's id and a sequence number of this run, would complete the
// wrong request with its result, or fail the ones before it by the gap
// rule. Starting from the clock (milliseconds × 10⁶) is not enough: a
// clock stepped back across a restart (the simulator found one of 1.3 s:
// seed 67245 of 6bc5c86 answered a setData with a delete's result) starts
// the new run below the old one. So each run also starts above a floor
// kept in the log directory, raised past what the run will use before it
// proposes anything, and again whenever it comes near.

const (
	seqFloorFile = "seqfloor"
	// seqReserve is how far above a run's next sequence number the floor
	// is put: at a million requests a second, 12 days of them.
	seqReserve = 1 << 40
)

var errSeqFloor = errors.New("replica: the sequence floor file is corrupt")

// startSeq sets this run's first sequence number, after the clock's and
// the floor's (the log replayed next can only raise it: its entries are
// below the floor), and raises the floor past it.
func (r *Replica) startSeq() error {
	floor, err := readSeqFloor(r.cfg.FS, r.cfg.Dir)
	if err != nil {
		return err
	}
	r.seq = max(r.seq, uint64(max(r.cfg.Now(), 0))*1_000_000, floor)
	return r.raiseSeqFloor()
}

// nextSeq returns a new sequence number for a request of this server. It
// raises the floor when half the reserve is used. A run that cannot write
// it goes on, logging why, and tries again after another quarter (not at
// every request: the write is synced, on the loop); the clock still
// orders runs unless it is stepped back meanwhile.
func (r *Replica) nextSeq() uint64 {
	r.seq++
	if r.seq+seqReserve/2 > r.seqFloor {
		if err := r.raiseSeqFloor(); err != nil {
			r.cfg.Logger.Error("raising the sequence floor", "err", err)
			r.seqFloor = r.seq + seqReserve/2 + seqReserve/4
		}
	}
	return r.seq
}

// raiseSeqFloor writes seq + seqReserve as the floor, durably (a file
// renamed into place, then the directory synced).
func (r *Replica) raiseSeqFloor() error {
	floor := r.seq + seqReserve
	if err := writeSeqFloor(r.cfg.FS, r.cfg.Dir, floor); err != nil {
		return err
	}
	r.seqFloor = floor
	return nil
}

// The file: the floor, 8 bytes big-endian, then their CRC-32C.
const seqFloorLen = 12

var seqFloorTable = crc32.MakeTable(crc32.Castagnoli)

// readSeqFloor reads dir's floor; 0 if there is none yet.
func readSeqFloor(fsys vfs.FS, dir string) (uint64, error) {
	name := filepath.Join(dir, seqFloorFile)
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("replica: %w", err)
	}
	defer f.Close()
	var b [seqFloorLen + 1]byte
	n, err := io.ReadFull(f, b[:])
	if err != io.ErrUnexpectedEOF || n != seqFloorLen ||
		crc32.Checksum(b[:8], seqFloorTable) != binary.BigEndian.Uint32(b[8:12]) {
		return 0, fmt.Errorf("%w: %s (%d bytes); it only guards against a clock stepped back across a restart: "+
			"remove it if the clock is right", errSeqFloor, name, n)
	}
	return binary.BigEndian.Uint64(b[:8]), nil
}

// writeSeqFloor replaces dir's floor with floor, durably.
func writeSeqFloor(fsys vfs.FS, dir string, floor uint64) error {
	var b [seqFloorLen]byte
	binary.BigEndian.PutUint64(b[:8], floor)
	binary.BigEndian.PutUint32(b[8:], crc32.Checksum(b[:8], seqFloorTable))
	name := filepath.Join(dir, seqFloorFile)
	tmp := name + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	_, werr := f.Write(b[:])
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("replica: writing %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	return nil
}
