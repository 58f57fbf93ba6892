package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// recordType is the type byte of a record.
type recordType byte

const (
	typeInvalid      recordType = 0 // never written: what zeroed space reads as
	typeEntry        recordType = 1
	typeHardState    recordType = 2
	typeSnapshotMark recordType = 3 // a snapshot this server took
	typeReceivedSnap recordType = 4 // a leader's snapshot: replaces the log
	maxRecordType               = typeReceivedSnap
)

func (t recordType) String() string {
	switch t {
	case typeEntry:
		return "entry"
	case typeHardState:
		return "hard-state"
	case typeSnapshotMark:
		return "snapshot-marker"
	case typeReceivedSnap:
		return "received-snapshot-marker"
	}
	return fmt.Sprintf("type(%d)", byte(t))
}

// headerSize is CRC (4) + length (4) + type (1).
const headerSize = 9

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the framed record to dst.
func appendRecord(dst []byte, t recordType, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, byte(t))
	dst = append(dst, payload...)
	crc := crc32.Checksum(dst[start+4:], crcTable)
	binary.LittleEndian.PutUint32(dst[start:], crc)
	return dst
}

// protoMessage is what raftpb's generated types offer for marshalling in
// place, without an allocation per record.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendProtoRecord appends a record whose payload is m, marshalled in place.
func appendProtoRecord(dst []byte, t recordType, m protoMessage) []byte {
	n := m.Size()
	start := len(dst)
	dst = slices.Grow(dst, headerSize+n)[:start+headerSize+n]
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(n))
	dst[start+8] = byte(t)
	if _, err := m.MarshalToSizedBuffer(dst[start+headerSize:]); err != nil {
		// raftpb's marshalling fails only on a buffer of the wrong size.
		panic(fmt.Sprintf("wal: marshal %T: %v", m, err))
	}
	binary.LittleEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], crcTable))
	return dst
}

// Reasons a record is bad; they end up in CorruptionError.Reason.
var (
	errShortHeader = errors.New("partial record header")
	errZeroHeader  = errors.New("zeroed record header")
	errTooLong     = errors.New("record length runs past the end of the file")
	errBadType     = errors.New("unknown record type")
	errChecksum    = errors.New("record checksum mismatch")
)

// decodeRecord decodes the record at the start of data, returning its type,
// payload (aliasing data) and total size.
func decodeRecord(data []byte) (recordType, []byte, int, error) {
	if len(data) < headerSize {
		return 0, nil, 0, errShortHeader
	}
	crc := binary.LittleEndian.Uint32(data)
	n := binary.LittleEndian.Uint32(data[4:])
	t := recordType(data[8])
	if crc == 0 && n == 0 && t == typeInvalid {
		return 0, nil, 0, errZeroHeader
	}
	if uint64(n) > uint64(len(data)-headerSize) {
		return 0, nil, 0, errTooLong
	}
	end := headerSize + int(n)
	if crc32.Checksum(data[4:end], crcTable) != crc {
		return 0, nil, 0, errChecksum
	}
	if t == typeInvalid || t > maxRecordType {
		return 0, nil, 0, errBadType
	}
	return t, data[headerSize:end], end, nil
}

// record is one decoded record and where it starts in its segment.
type record struct {
	typ     recordType
	payload []byte
	off     int64
}

// scanResult is what scanning one segment's bytes found.
type scanResult struct {
	records []record
	end     int64 // offset just past the last good record
	bad     error // why the record at end is bad; nil if data ended cleanly
	corrupt bool  // a valid record follows the bad one
}

// scan decodes the records of one segment and classifies its end.
func scan(data []byte) scanResult {
	var r scanResult
	off := 0
	for off < len(data) {
		t, p, n, err := decodeRecord(data[off:])
		if err != nil {
			r.end = int64(off)
			if !allZero(data[off:]) {
				r.bad = err
				r.corrupt = validRecordAfter(data, off+1) || !tornRecord(data[off:])
			}
			return r
		}
		r.records = append(r.records, record{typ: t, payload: p, off: int64(off)})
		off += n
	}
	r.end = int64(off)
	return r
}

// validRecordAfter reports whether a valid record starts anywhere at or
// after from. Records are not aligned, so every offset is tried; this runs
// only when a segment has a bad record, and a CRC32C match by chance at a
// given offset has odds of 2^-32. Cheap tests come before the CRC so that a
// long run of garbage costs little more than a pass over it: the type byte
// must be known, the length must fit, and the record must be followed by
// the end of the data, zeros, or what starts like another record.
func validRecordAfter(data []byte, from int) bool {
	for p := from; p+headerSize <= len(data); p++ {
		if !knownType(data[p+8]) {
			continue
		}
		n := int64(binary.LittleEndian.Uint32(data[p+4:]))
		next := int64(p) + headerSize + n
		if next > int64(len(data)) || !plausibleNext(data, int(next)) {
			continue
		}
		if _, _, _, err := decodeRecord(data[p:]); err == nil {
			return true
		}
	}
	return false
}

func knownType(b byte) bool { return b != byte(typeInvalid) && b <= byte(maxRecordType) }

// plausibleNext reports whether what is at off could follow a record: the
// end of the data, zeros, or a header (perhaps torn) with a known type.
func plausibleNext(data []byte, off int) bool {
	if len(data)-off < headerSize {
		return true // the end, or a torn header
	}
	return knownType(data[off+8]) || allZero(data[off:off+headerSize])
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// maxTrailingZeros bounds how many zero bytes tornRecord assumes can end a
// record when it checks whether a damaged length field hides a record
// that was written whole.
const maxTrailingZeros = 64

// tornRecord reports whether the bad record at the start of tail (which
// runs to the end of its segment, with no valid record after it) can be
// a write cut short by a crash, rather than damage to bytes that were
// written whole. A torn write keeps a prefix of what was written (the
// rest reads as zeros, or the file ends), so the record it leaves
// claims bytes past the last non-zero byte of the segment. A record that
// lies wholly within the written bytes and still fails its checksum was
// written whole and then damaged (bit rot): if it was fsynced, cutting it
// would drop an acknowledged write, so it is corruption. So is a record
// whose length field was damaged, found by trying the lengths that end
// it at the written data (plus at most maxTrailingZeros zero bytes).
//
// What this cannot tell apart: damage to a last record whose last bytes
// are zeros (as written, or after the damage), which is what a write that
// lost those bytes leaves; it is taken as torn. A HardState, which ends
// most Saves, ends in its commit index, not zero once anything commits.
func tornRecord(tail []byte) bool {
	if len(tail) < headerSize || mutTornAlways {
		return true // the file ends inside the header
	}
	crc := binary.LittleEndian.Uint32(tail)
	n := int64(binary.LittleEndian.Uint32(tail[4:]))
	if crc == 0 && n == 0 {
		// Never written: a written record's CRC covers a non-zero type,
		// so this is unused (zeroed) space, perhaps with a flipped bit.
		return true
	}
	written := int64(len(tail))
	for written > 0 && tail[written-1] == 0 {
		written--
	}
	if headerSize+n <= written {
		return false // wholly written, yet bad
	}
	return !lengthDamaged(tail, written)
}

// lengthDamaged reports whether the record at the start of tail checks
// out with some other length that ends it within maxTrailingZeros bytes
// after written: a record written whole whose length field was damaged.
func lengthDamaged(tail []byte, written int64) bool {
	crc := binary.LittleEndian.Uint32(tail)
	var hdr [5]byte
	hdr[4] = tail[8]
	for end := max(written, headerSize); end <= min(written+maxTrailingZeros, int64(len(tail))); end++ {
		binary.LittleEndian.PutUint32(hdr[:], uint32(end-headerSize))
		if crc32.Update(crc32.Checksum(hdr[:], crcTable), crcTable, tail[headerSize:end]) == crc {
			return true
		}
	}
	return false
}
