package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// appendRecordV1 is the record encoder of format v1, which Zoo no longer
// writes: CRC32C(len, type, payload) | len | type | payload.
func appendRecordV1(dst []byte, t recordType, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, byte(t))
	dst = append(dst, payload...)
	binary.LittleEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], crcTable))
	return dst
}

// segV2 is the bytes of a v2 segment holding recs (framed records).
func segV2(recs ...[]byte) []byte {
	data := append([]byte(nil), segmentMagic[:]...)
	for _, r := range recs {
		data = append(data, r...)
	}
	return data
}

// concat joins byte slices into a new one.
func concat(parts ...[]byte) []byte {
	var data []byte
	for _, p := range parts {
		data = append(data, p...)
	}
	return data
}
