package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// ValidPrefix returns the length of the longest prefix of a segment's
// bytes that is whole, valid records. A backup copies a segment while it
// is being appended to, so its copy may show a record written after the
// reader passed an earlier one's (then zero) place; cutting the copy here
// keeps only records that were all there, as a torn tail is cut.
func ValidPrefix(data []byte) int64 { return scan(data).end }

// ValidPrefixReader is ValidPrefix over a stream of size bytes, holding
// one record at a time rather than the whole segment: a backup reads
// segments beside a running server, whose collector would otherwise pay
// for a segment-sized allocation per segment.
func ValidPrefixReader(r io.Reader, size int64) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		off int64
		hdr [headerSize]byte
		buf []byte
	)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return off, nil
			}
			return off, err
		}
		crc := binary.LittleEndian.Uint32(hdr[:])
		n := int64(binary.LittleEndian.Uint32(hdr[4:]))
		t := recordType(hdr[8])
		if t == typeInvalid || t > maxRecordType || n > size-off-headerSize {
			return off, nil
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return off, nil
			}
			return off, err
		}
		c := crc32.Update(crc32.Checksum(hdr[4:], crcTable), crcTable, buf)
		if c != crc {
			return off, nil
		}
		off += headerSize + n
	}
}
