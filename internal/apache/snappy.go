package apache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
)

// snappy-java's stream format (SnappyOutputStream), which Apache uses for
// ".snappy" snapshots: a 16-byte header (magic, version, compatible
// version), then chunks of a big-endian int length and a raw Snappy block.
// A second header may follow (concatenated streams).
var snappyMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	snappyHeaderLen = 16
	// snappyMaxChunk bounds a chunk, compressed or not: snappy-java writes
	// 32 KiB blocks by default and never more than a few MiB.
	snappyMaxChunk = 64 << 20
)

type snappyReader struct {
	r      io.Reader
	name   string
	off    int64 // in the compressed file
	header bool  // a header has been read
	out    []byte
	in     []byte
	err    error
}

func newSnappyReader(r io.Reader, name string) *snappyReader {
	return &snappyReader{r: r, name: name}
}

func (s *snappyReader) fail(format string, args ...any) error {
	return &FileError{File: s.name, Offset: s.off,
		Err: fmt.Errorf("%w: snappy stream (offset is in the compressed file): %s", ErrCorrupt, fmt.Sprintf(format, args...))}
}

func (s *snappyReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.next()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// next decodes the next chunk into s.out, or returns io.EOF at a clean end.
func (s *snappyReader) next() error {
	var lb [4]byte
	n, err := io.ReadFull(s.r, lb[:])
	if err == io.EOF && s.header {
		return io.EOF
	}
	if err != nil {
		return s.fail("cut short after %d bytes of a chunk length", n)
	}
	if lb[0] == snappyMagic[0] && bytes.Equal(lb[:], snappyMagic[:4]) {
		return s.readHeader(lb[:])
	}
	if !s.header {
		return s.fail("no snappy-java header")
	}
	s.off += 4
	clen := binary.BigEndian.Uint32(lb[:])
	if clen == 0 || clen > snappyMaxChunk {
		return s.fail("chunk length %d", clen)
	}
	s.in = growTo(s.in, int(clen))
	if n, err := io.ReadFull(s.r, s.in); err != nil {
		return s.fail("chunk of %d bytes cut short after %d", clen, n)
	}
	dlen, err := s2.DecodedLen(s.in)
	if err != nil || dlen > snappyMaxChunk {
		return s.fail("chunk: bad decoded length %d (%v)", dlen, err)
	}
	out, err := s2.Decode(growTo(s.out[:0:cap(s.out)], dlen), s.in)
	if err != nil {
		return s.fail("chunk: %v", err)
	}
	s.off += int64(clen)
	s.out = out
	return nil
}

func (s *snappyReader) readHeader(first []byte) error {
	var h [snappyHeaderLen]byte
	copy(h[:], first)
	if _, err := io.ReadFull(s.r, h[len(first):]); err != nil || !bytes.Equal(h[:8], snappyMagic) {
		return s.fail("bad snappy-java header")
	}
	s.off += snappyHeaderLen
	s.header = true
	return nil
}

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// snappyWriter writes snappy-java's stream format.
type snappyWriter struct {
	w   io.Writer
	buf []byte
	err error
}

const snappyBlock = 32 << 10

func newSnappyWriter(w io.Writer) *snappyWriter {
	h := append([]byte{}, snappyMagic...)
	h = binary.BigEndian.AppendUint32(h, 1)
	h = binary.BigEndian.AppendUint32(h, 1)
	_, err := w.Write(h)
	return &snappyWriter{w: w, err: err}
}

func (s *snappyWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.err == nil {
		k := min(len(p), snappyBlock-len(s.buf))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if len(s.buf) == snappyBlock {
			s.flush()
		}
	}
	return n, s.err
}

func (s *snappyWriter) flush() {
	if len(s.buf) == 0 || s.err != nil {
		return
	}
	enc := s2.EncodeSnappy(nil, s.buf)
	chunk := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(enc)), uint32(len(enc)))
	_, s.err = s.w.Write(append(chunk, enc...))
	s.buf = s.buf[:0]
}

// Close writes the last chunk; it does not close the underlying writer.
func (s *snappyWriter) Close() error {
	s.flush()
	return s.err
}
