package wal

import (
	"errors"
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
	rr, err := newRecordReader(r, size)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for {
		_, bad, err := rr.next()
		if bad != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return rr.off, nil
		}
		if err != nil {
			return rr.off, err
		}
	}
}
