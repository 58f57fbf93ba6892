package apache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"slices"
)

// Errors. Each comes inside a *FileError naming file and offset.
var (
	// ErrCorrupt means a file's bytes are not what Apache writes: a
	// checksum that does not match, a bad magic, a length out of range, a
	// record cut short where Apache would not cut one.
	ErrCorrupt = errors.New("apache: corrupt file")
	// ErrUnsupported means a well-formed file uses something this build
	// does not read (a format version, a txn type).
	ErrUnsupported = errors.New("apache: unsupported")
	// ErrNoData means a directory holds no Apache snapshot or log.
	ErrNoData = errors.New("apache: no Apache ZooKeeper data")
)

// FileError is an error about the content of one file.
type FileError struct {
	File   string
	Offset int64 // in the uncompressed stream
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// DefaultMaxLen bounds one buffer or string read from a file: Apache's
// own jute.maxbuffer default is 1 MiB, and a znode never holds more, but
// a server may have been run with a larger one.
const DefaultMaxLen = 256 << 20

// Options tune reading. The zero value is valid.
type Options struct {
	// MaxLen bounds every length read; 0 means DefaultMaxLen.
	MaxLen int
}

func (o Options) maxLen() int {
	if o.MaxLen <= 0 {
		return DefaultMaxLen
	}
	return o.MaxLen
}

// rd reads jute values from a stream, counting the offset and keeping the
// Adler-32 of every byte consumed (Java's CheckedInputStream).
type rd struct {
	br   *bufio.Reader
	name string
	off  int64
	sum  hash.Hash32
	max  int
	b8   [8]byte
}

func newRd(r io.Reader, name string, max int) *rd {
	return &rd{br: bufio.NewReaderSize(r, 64<<10), name: name, sum: adler32.New(), max: max}
}

// fail wraps err with the file and the current offset.
func (r *rd) fail(err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	return &FileError{File: r.name, Offset: r.off, Err: err}
}

// corrupt is fail for a description of bad content.
func (r *rd) corrupt(format string, args ...any) error {
	return r.fail(fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...)))
}

// full reads exactly len(p) bytes. Running out is corruption: the caller
// knows where a file may end.
func (r *rd) full(p []byte, what string) error {
	n, err := io.ReadFull(r.br, p)
	r.sum.Write(p[:n])
	r.off += int64(n)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.corrupt("%s: file ends after %d of %d bytes", what, n, len(p))
	}
	if err != nil {
		return r.fail(err)
	}
	return nil
}

func (r *rd) int32(what string) (int32, error) {
	if err := r.full(r.b8[:4], what); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(r.b8[:4])), nil
}

func (r *rd) int64(what string) (int64, error) {
	if err := r.full(r.b8[:8], what); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(r.b8[:8])), nil
}

// buffer reads a jute buffer: nil for length -1.
func (r *rd) buffer(what string) ([]byte, error) {
	n, err := r.int32(what + " length")
	if err != nil {
		return nil, err
	}
	if n == -1 {
		return nil, nil
	}
	if n < 0 || int(n) > r.max {
		return nil, r.corrupt("%s: length %d out of range [0, %d]", what, n, r.max)
	}
	// Grow as bytes arrive: a lying length costs at most twice the file.
	b := make([]byte, 0, min(int(n), 64<<10))
	for len(b) < int(n) {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(int(n)-len(b), cap(b)))
		}
		k := min(int(n)-len(b), cap(b)-len(b))
		if err := r.full(b[len(b):len(b)+k], what); err != nil {
			return nil, err
		}
		b = b[:len(b)+k]
	}
	return b, nil
}

// str reads a jute ustring; null reads as "".
func (r *rd) str(what string) (string, error) {
	b, err := r.buffer(what)
	return string(b), err
}

// seal checks a seal: the Adler-32 of everything before it, then "/".
func (r *rd) seal(what string) error {
	want := r.sum.Sum32()
	got, err := r.int64(what + " checksum")
	if err != nil {
		return err
	}
	if uint32(got) != want || got>>32 != 0 {
		return r.corrupt("%s: checksum %#x, computed %#x", what, got, want)
	}
	s, err := r.str(what + " end")
	if err != nil {
		return err
	}
	if s != "/" {
		return r.corrupt("%s: %q after the checksum, want \"/\"", what, s)
	}
	return nil
}

// atEOF reports whether the stream has ended.
func (r *rd) atEOF() bool {
	_, err := r.br.Peek(1)
	return err == io.EOF
}
