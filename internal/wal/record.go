package wal

import (
	"bytes"
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

// segmentMagic starts every segment of format v2 (see the package doc).
// Every v1 segment starts with a snapshot-marker record, whose type byte
// (byte 8) is 3; the magic's is 0xff, so a v1 segment never starts with
// it. Read as a v1 record (by a Zoo before v2), the magic is a header of
// length 0 whose CRC does not match, followed by more bytes: a record
// written whole and damaged, which v1 recovery refuses as corruption
// rather than cut as a torn tail.
var segmentMagic = [magicSize]byte{'Z', 'O', 'O', 'W', 0, 0, 0, 0, 0xff, 'W', 'A', 'L', ' ', 'v', '2', '\n'}

const magicSize = 16

// headerSize is the v2 header: header CRC (4), length (4), type (1) and
// payload CRC (4). The header CRC covers the nine bytes after it.
const headerSize = 13

// endMark ends every v2 record. It is never zero, so a record that was
// written whole always ends in a non-zero byte, and a record whose last
// byte is zero was cut short. It has more than one bit set, so that no
// single flipped bit makes it zero.
const endMark byte = 0xa5

// recordOverhead is what framing adds to a payload in v2.
const recordOverhead = headerSize + 1

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the framed v2 record to dst.
func appendRecord(dst []byte, t recordType, payload []byte) []byte {
	start := len(dst)
	dst = slices.Grow(dst, recordOverhead+len(payload))[:start+headerSize]
	dst = append(dst, payload...)
	dst = append(dst, endMark)
	putHeader(dst[start:], t, payload)
	return dst
}

// putHeader fills the header at the start of rec, whose payload follows it.
func putHeader(rec []byte, t recordType, payload []byte) {
	binary.LittleEndian.PutUint32(rec[4:], uint32(len(payload)))
	rec[8] = byte(t)
	binary.LittleEndian.PutUint32(rec[9:], crc32.Checksum(payload, crcTable))
	binary.LittleEndian.PutUint32(rec, crc32.Checksum(rec[4:headerSize], crcTable))
}

// protoMessage is what raftpb's generated types offer for marshalling in
// place, without an allocation per record.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendProtoRecord appends a v2 record whose payload is m, marshalled in
// place.
func appendProtoRecord(dst []byte, t recordType, m protoMessage) []byte {
	n := m.Size()
	start := len(dst)
	dst = slices.Grow(dst, recordOverhead+n)[:start+recordOverhead+n]
	payload := dst[start+headerSize : start+headerSize+n]
	if _, err := m.MarshalToSizedBuffer(payload); err != nil {
		// raftpb's marshalling fails only on a buffer of the wrong size.
		panic(fmt.Sprintf("wal: marshal %T: %v", m, err))
	}
	dst[len(dst)-1] = endMark
	putHeader(dst[start:], t, payload)
	return dst
}

// Reasons a record is bad; they end up in CorruptionError.Reason.
var (
	errShortHeader    = errors.New("partial record header")
	errZeroHeader     = errors.New("zeroed record header")
	errTooLong        = errors.New("record length runs past the end of the file")
	errBadType        = errors.New("unknown record type")
	errChecksum       = errors.New("record checksum mismatch")
	errHeaderChecksum = errors.New("record header checksum mismatch")
	errNoRecords      = errors.New("segment does not start with a record")
)

// frame is a record format: how a header is checked, how the rest of a
// record is, and how a bad last record is told torn.
type frame interface {
	headerSize() int
	// parseHeader checks a header and returns the record's type and the
	// size of the rest of it (payload and any trailer).
	parseHeader(h []byte) (recordType, int64, error)
	// checkBody checks the rest of a record against its header and
	// returns the payload (aliasing body).
	checkBody(h, body []byte) ([]byte, error)
	// torn reports whether the bad record at the start of tail (the rest
	// of its segment: not all zeros, no valid record after it) can be a
	// write cut short by a crash rather than damage to written bytes.
	torn(tail []byte) bool
	// candidate is a cheap test that a record may start at data[p:]
	// (p+headerSize <= len(data)), run before decoding it.
	candidate(data []byte, p int) bool
}

// frameOf says the format of a segment from its first bytes, and where
// its records start.
func frameOf(first []byte) (frame, int) {
	if len(first) >= magicSize && bytes.Equal(first[:magicSize], segmentMagic[:]) {
		return v2Frame{}, magicSize
	}
	return v1Frame{}, 0
}

// decode decodes the record at the start of data, returning its type,
// payload (aliasing data) and total size.
func decode(f frame, data []byte) (recordType, []byte, int, error) {
	h := f.headerSize()
	if len(data) < h {
		return 0, nil, 0, errShortHeader
	}
	t, n, err := f.parseHeader(data[:h])
	if err != nil {
		return 0, nil, 0, err
	}
	if n > int64(len(data)-h) {
		return 0, nil, 0, errTooLong
	}
	end := h + int(n)
	p, err := f.checkBody(data[:h], data[h:end])
	if err != nil {
		return 0, nil, 0, err
	}
	return t, p, end, nil
}

// v2Frame is the record format of this version (see the package doc).
type v2Frame struct{}

func (v2Frame) headerSize() int { return headerSize }

func (v2Frame) parseHeader(h []byte) (recordType, int64, error) {
	if allZero(h) {
		return 0, 0, errZeroHeader
	}
	if crc32.Checksum(h[4:headerSize], crcTable) != binary.LittleEndian.Uint32(h) {
		return 0, 0, errHeaderChecksum
	}
	t := recordType(h[8])
	if !knownType(h[8]) {
		return 0, 0, errBadType
	}
	return t, int64(binary.LittleEndian.Uint32(h[4:])) + 1, nil
}

func (v2Frame) checkBody(h, body []byte) ([]byte, error) {
	p := body[:len(body)-1]
	if body[len(body)-1] != endMark || crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(h[9:]) {
		return nil, errChecksum
	}
	return p, nil
}

// torn applies the v2 rule. A crash keeps a prefix of an unsynced write,
// the rest reading as zeros (or the file ends), and every record written
// whole ends in its non-zero end mark. So a bad record is torn only when
// its end mark and everything after it are zeros or missing: the length
// of a header that checks out is the record's true length, and a header
// that does not check out was written whole only if something non-zero
// follows it. Anything else was written whole and damaged since: it may
// have been fsynced and acknowledged, so it is corruption.
func (v2Frame) torn(tail []byte) bool {
	if len(tail) < headerSize || mutTornAlways {
		return true // the file ends inside the header
	}
	if allZero(tail[:8]) {
		// No header CRC and no length: never written, so this is unused
		// (zeroed) space with a flipped bit.
		return true
	}
	_, n, err := v2Frame{}.parseHeader(tail[:headerSize])
	switch {
	case errors.Is(err, errBadType):
		return false // a header that checks out, but of no known type
	case err != nil:
		return allZero(tail[headerSize:])
	}
	end := int64(headerSize) + n
	if end > int64(len(tail)) {
		return true // the file ends inside the record
	}
	return allZero(tail[end-1:])
}

// candidate: a known type byte. Garbage then fails the header CRC, which
// costs the same at every offset, so a search is linear in the bytes.
func (v2Frame) candidate(data []byte, p int) bool { return knownType(data[p+8]) }

// record is one decoded record and where it starts in its segment.
type record struct {
	typ     recordType
	payload []byte
	off     int64
	size    int64 // framing included
}

// scanResult is what scanning one segment's bytes found.
type scanResult struct {
	records []record
	end     int64 // offset just past the last good record
	bad     error // why the record at end is bad; nil if data ended cleanly
	corrupt bool  // the bad record is damage, not a torn tail
}

// scan decodes the records of one segment's bytes and classifies its end,
// as readSegment does while streaming.
func scan(data []byte) scanResult {
	f, start := frameOf(data)
	var r scanResult
	off := start
	for off < len(data) {
		t, p, n, err := decode(f, data[off:])
		if err != nil {
			r.end = int64(off)
			if off == start || !allZero(data[off:]) {
				r.bad = err
				r.corrupt = off == start || badIsCorrupt(f, data[off:])
			}
			return r
		}
		r.records = append(r.records, record{typ: t, payload: p, off: int64(off), size: int64(n)})
		off += n
	}
	r.end = int64(off)
	if len(r.records) == 0 {
		r.bad, r.corrupt = errNoRecords, true
	}
	return r
}

// badIsCorrupt classifies the bad record at the start of tail, which is
// not the first of its segment and not followed by zeros alone: a valid
// record after it, or damage to a record written whole, is corruption;
// otherwise it is a torn tail.
func badIsCorrupt(f frame, tail []byte) bool {
	return validRecordAfter(f, tail, 1) || !f.torn(tail)
}

// validRecordAfter reports whether a valid record starts anywhere at or
// after from. Records are not aligned, so every offset is tried; this runs
// only when a segment has a bad record, and a checksum match by chance at
// a given offset has odds of 2^-32. The frame's cheap test comes first so
// that a long run of garbage costs little more than a pass over it.
func validRecordAfter(f frame, data []byte, from int) bool {
	h := f.headerSize()
	for p := from; p+h <= len(data); p++ {
		if !f.candidate(data, p) {
			continue
		}
		if _, _, _, err := decode(f, data[p:]); err == nil {
			return true
		}
	}
	return false
}

func knownType(b byte) bool { return b != byte(typeInvalid) && b <= byte(maxRecordType) }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
