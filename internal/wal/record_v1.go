package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// headerSizeV1 is the v1 header: CRC (4) + length (4) + type (1).
const headerSizeV1 = 9

// v1Frame reads the records of segments written before format v2: one
// CRC32C over length, type and payload. Zoo writes no v1 records; it
// reads them so that a data directory of an earlier version loses
// nothing (see the package doc).
type v1Frame struct{}

func (v1Frame) headerSize() int { return headerSizeV1 }

func (v1Frame) parseHeader(h []byte) (recordType, int64, error) {
	if binary.LittleEndian.Uint32(h) == 0 && binary.LittleEndian.Uint32(h[4:]) == 0 && h[8] == 0 {
		return 0, 0, errZeroHeader
	}
	return recordType(h[8]), int64(binary.LittleEndian.Uint32(h[4:])), nil
}

func (v1Frame) checkBody(h, body []byte) ([]byte, error) {
	if crc32.Update(crc32.Checksum(h[4:], crcTable), crcTable, body) != binary.LittleEndian.Uint32(h) {
		return nil, errChecksum
	}
	if !knownType(h[8]) {
		return nil, errBadType
	}
	return body, nil
}

// candidate: the type byte must be known, the length must fit, and the
// record must be followed by the end of the data, zeros, or what starts
// like another record; only then is the CRC, over the whole record,
// worth computing.
func (v1Frame) candidate(data []byte, p int) bool {
	if !knownType(data[p+8]) {
		return false
	}
	next := int64(p) + headerSizeV1 + int64(binary.LittleEndian.Uint32(data[p+4:]))
	return next <= int64(len(data)) && plausibleNextV1(data, int(next))
}

// plausibleNextV1 reports whether what is at off could follow a record:
// the end of the data, zeros, or a header (perhaps torn) with a known
// type.
func plausibleNextV1(data []byte, off int) bool {
	if len(data)-off < headerSizeV1 {
		return true // the end, or a torn header
	}
	return knownType(data[off+8]) || allZero(data[off:off+headerSizeV1])
}

// maxTrailingZeros bounds how many zero bytes torn assumes can end a v1
// record when it checks whether a damaged length field hides a record
// that was written whole.
const maxTrailingZeros = 64

// torn is the v1 heuristic; v1 has no header checksum, so a damaged length
// cannot be told from a torn record for sure. A torn write keeps a prefix
// of what was written (the rest reads as zeros, or the file ends), so the
// record it leaves claims bytes past the last non-zero byte of the
// segment. A record that lies wholly within the written bytes and still
// fails its checksum was written whole and then damaged (bit rot). So is
// a record whose length field was damaged, found by trying the lengths
// that end it at the written data (plus at most maxTrailingZeros zero
// bytes).
//
// What this cannot tell apart: damage to a last record whose last bytes
// are zeros, which is what a write that lost those bytes leaves; and a
// damaged length of a last synced record followed by a torn write (its
// true end lies before the written bytes end). Both are taken as torn.
// Format v2 closes both.
func (v1Frame) torn(tail []byte) bool {
	if len(tail) < headerSizeV1 || mutTornAlways {
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
	if headerSizeV1+n <= written {
		return false // wholly written, yet bad
	}
	return !lengthDamagedV1(tail, written)
}

// lengthDamagedV1 reports whether the record at the start of tail checks
// out with some other length that ends it within maxTrailingZeros bytes
// after written: a record written whole whose length field was damaged.
func lengthDamagedV1(tail []byte, written int64) bool {
	crc := binary.LittleEndian.Uint32(tail)
	var hdr [5]byte
	hdr[4] = tail[8]
	for end := max(written, headerSizeV1); end <= min(written+maxTrailingZeros, int64(len(tail))); end++ {
		binary.LittleEndian.PutUint32(hdr[:], uint32(end-headerSizeV1))
		if crc32.Update(crc32.Checksum(hdr[:], crcTable), crcTable, tail[headerSizeV1:end]) == crc {
			return true
		}
	}
	return false
}
