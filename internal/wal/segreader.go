package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/zoohq/zoo/internal/vfs"
)

// zeroWindow is how far past a zeroed record header recovery checks that
// the segment holds only zeros before taking the header as the end of the
// written records. The preallocated rest of a segment is never read, so
// restart time does not grow with it. A zeroed hole before non-zero bytes
// within the window makes recovery read the whole rest of the segment and
// classify the damage as scan does (a torn tail, or corruption if a valid
// record follows). What the window gives up: a hole longer than it before
// more records is taken as the end. A crash in the middle of a Save can
// leave such a hole, but that Save was never acknowledged (its fsync did
// not return), so cutting it loses nothing acknowledged; only a zeroed
// region over 1 MiB of fsynced data followed by more records, which is
// disk damage, now goes unnoticed here.
const zeroWindow = 1 << 20

// readBufSize is the buffered reader's size: large enough that a read
// costs few system calls, small enough to hold per segment.
const readBufSize = 64 << 10

// recordReader decodes the records of a segment of size bytes one at a
// time through a buffered reader, in the segment's format (frameOf). A
// record's payload is valid until the next call of next.
type recordReader struct {
	br    *bufio.Reader
	f     frame
	size  int64
	start int64 // where the records start: past the magic of a v2 segment
	off   int64 // where the next record starts
	hdr   [headerSize]byte
	buf   []byte
}

func newRecordReader(r io.Reader, size int64) (*recordReader, error) {
	rr := &recordReader{br: bufio.NewReaderSize(r, readBufSize), size: size}
	first, err := rr.br.Peek(int(min(size, magicSize)))
	if err != nil {
		return nil, err
	}
	f, start := frameOf(first)
	if _, err := rr.br.Discard(start); err != nil {
		return nil, err
	}
	rr.f, rr.start, rr.off = f, int64(start), int64(start)
	return rr, nil
}

// next decodes the record at rr.off. At the end of the segment it returns
// io.EOF. A bad record is returned as bad (one of the errXxx reasons of
// decode), with rr.off left at its start; err is a read error.
func (rr *recordReader) next() (rec record, bad, err error) {
	h := int64(rr.f.headerSize())
	left := rr.size - rr.off
	if left == 0 {
		return record{}, nil, io.EOF
	}
	if left < h {
		return record{}, errShortHeader, nil
	}
	hdr := rr.hdr[:h]
	if _, err := io.ReadFull(rr.br, hdr); err != nil {
		return record{}, nil, err
	}
	t, n, bad := rr.f.parseHeader(hdr)
	if bad != nil {
		return record{}, bad, nil
	}
	if n > left-h {
		return record{}, errTooLong, nil
	}
	if int64(cap(rr.buf)) < n {
		rr.buf = make([]byte, n)
	}
	rr.buf = rr.buf[:n]
	if _, err := io.ReadFull(rr.br, rr.buf); err != nil {
		return record{}, nil, err
	}
	p, bad := rr.f.checkBody(hdr, rr.buf)
	if bad != nil {
		return record{}, bad, nil
	}
	rec = record{typ: t, payload: p, off: rr.off, size: h + n}
	rr.off += h + n
	return rec, nil, nil
}

// zerosFollow reports whether the window after a zeroed header at rr.off
// (or the rest of the segment, if shorter) is all zeros.
func (rr *recordReader) zerosFollow() (bool, error) {
	n := min(rr.size-rr.off-int64(rr.f.headerSize()), zeroWindow)
	for n > 0 {
		b, err := rr.br.Peek(int(min(n, readBufSize)))
		if err != nil {
			return false, err
		}
		if !allZero(b) {
			return false, nil
		}
		n -= int64(len(b))
		if _, err := rr.br.Discard(len(b)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// segmentEnd is how a segment's records end: what scan says of the
// whole segment, found without reading its zeroed preallocated tail.
type segmentEnd struct {
	end     int64  // offset just past the last good record
	bad     error  // why the record at end is bad; nil if the records ended cleanly
	corrupt bool   // the bad record is damage, not a torn tail
	tail    []byte // the bytes from end on, when bad is set past the first record
	size    int64  // the segment's size
	v1      bool   // the segment is in format v1
}

// readSegment streams the records of the segment name to fn, in order,
// stopping at the first bad record or at a zeroed header followed by
// zeros. A bad record that is not followed by zeros alone makes it read
// the rest of the segment, to classify the damage as scan does. A
// segment's first record was fsynced before the segment was renamed into
// place, so a segment that does not start with a good record is corrupt.
func readSegment(fs vfs.FS, name string, fn func(record) error) (segmentEnd, error) {
	f, rr, err := openSegment(fs, name)
	if err != nil {
		return segmentEnd{}, err
	}
	defer f.Close()
	_, v1 := rr.f.(v1Frame)
	clean := func() (segmentEnd, error) {
		if rr.off == rr.start {
			return segmentEnd{end: rr.off, bad: errNoRecords, corrupt: true, size: rr.size, v1: v1}, nil
		}
		return segmentEnd{end: rr.off, size: rr.size, v1: v1}, nil
	}
	for {
		rec, bad, err := rr.next()
		if errors.Is(err, io.EOF) && bad == nil && rr.off == rr.size {
			return clean()
		}
		if err != nil {
			return segmentEnd{}, fmt.Errorf("wal: read %s at %d: %w", name, rr.off, err)
		}
		if bad == nil {
			if err := fn(rec); err != nil {
				return segmentEnd{}, err
			}
			continue
		}
		if rr.off == rr.start {
			return segmentEnd{end: rr.off, bad: bad, corrupt: true, size: rr.size, v1: v1}, nil
		}
		if errors.Is(bad, errZeroHeader) {
			zeros, err := rr.zerosFollow()
			if err != nil {
				return segmentEnd{}, fmt.Errorf("wal: read %s at %d: %w", name, rr.off, err)
			}
			if zeros {
				return clean()
			}
		}
		r, err := classifyTail(f, rr.f, name, rr.off, rr.size, bad)
		r.v1 = v1
		return r, err
	}
}

// openSegment opens the segment name and a record reader over it; the
// caller closes the file.
func openSegment(fs vfs.FS, name string) (vfs.File, *recordReader, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("wal: read %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err == nil {
		var rr *recordReader
		if rr, err = newRecordReader(f, fi.Size()); err == nil {
			return f, rr, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("wal: read %s: %w", name, err)
}

// classifyTail reads the segment from a bad record at off to its end and
// says, as scan does, whether it is zeros only (a clean end), a torn
// tail, or corruption.
func classifyTail(f vfs.File, fr frame, name string, off, size int64, bad error) (segmentEnd, error) {
	tail, err := io.ReadAll(io.NewSectionReader(f, off, size-off))
	if err != nil {
		return segmentEnd{}, fmt.Errorf("wal: read %s at %d: %w", name, off, err)
	}
	if allZero(tail) {
		return segmentEnd{end: off, size: size}, nil
	}
	return segmentEnd{end: off, bad: bad, corrupt: badIsCorrupt(fr, tail), tail: tail, size: size}, nil
}
