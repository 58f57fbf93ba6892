package server

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Read buffering that costs an idle connection almost nothing.
//
// A reader blocked on a socket must hold the buffer it reads into, so a
// 64 KiB bufio.Reader per connection made every idle session cost 64 KiB
// of heap (issue 17). Most clients send one small request at a time and
// then wait, so a connection reads into a small buffer of its own, and
// borrows a large one from a pool only while its client pipelines (a read
// fills the small buffer). It gives the large one back as soon as a read
// finds less than a small buffer's worth waiting, so the pool, not the
// connection, holds it while the client is quiet.

const (
	smallReadBuf = 512      // a request frame of most clients, whole
	largeReadBuf = 64 << 10 // a pipelining client's batch
)

var largeBufs = sync.Pool{New: func() any { b := make([]byte, largeReadBuf); return &b }}

// errPeekTooLong: Peek asked for more than the small buffer holds.
var errPeekTooLong = errors.New("server: peek longer than the read buffer")

// connReader is a buffered reader over a connection's socket (or its TLS
// layer). It is used by the connection's reader goroutine only.
type connReader struct {
	rd    io.Reader
	small [smallReadBuf]byte
	large *[]byte // borrowed from largeBufs while the client pipelines
	buf   []byte  // small[:] or *large
	r, w  int     // buf[r:w] is read from the socket, not yet consumed
	// at is when the last read of the socket returned bytes, and fills
	// counts those reads. The frames of one read arrived together, so
	// they share its clock reading: a pipelining client's requests cost
	// one clock reading per read, not several per request (issue 14).
	at    time.Time
	fills uint64
}

func newConnReader(rd io.Reader) *connReader {
	cr := &connReader{rd: rd}
	cr.buf = cr.small[:]
	return cr
}

func (cr *connReader) buffered() int { return cr.w - cr.r }

// Read reads into p what is buffered or, if nothing is, what one read of
// the socket brings. A read as large as the buffer goes straight into p.
func (cr *connReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if cr.r == cr.w {
		cr.r, cr.w = 0, 0
		if len(p) >= len(cr.buf) {
			cr.release()
			return cr.rd.Read(p)
		}
		if err := cr.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, cr.buf[cr.r:cr.w])
	cr.r += n
	return n, nil
}

// fill reads the socket once into the free end of the buffer. It chooses
// the buffer first: the large one while reads keep filling the small one,
// the small one again once a read brings less.
func (cr *connReader) fill() error {
	if cr.r == cr.w {
		cr.r, cr.w = 0, 0
	}
	if cr.large == nil && cr.w == len(cr.buf) {
		cr.borrow()
	}
	for {
		n, err := cr.rd.Read(cr.buf[cr.w:])
		cr.w += n
		switch {
		case n > 0:
			cr.at = time.Now()
			cr.fills++
			cr.adapt(n)
			return nil
		case err != nil:
			cr.release() // the connection is ending, or idle past a deadline
			return err
		}
	}
}

// adapt switches buffers after a read of n bytes: a full small buffer
// means more is waiting; a short read into the large one means the client
// has caught up, and the large buffer goes back unless it holds data.
func (cr *connReader) adapt(n int) {
	switch {
	case cr.large == nil && cr.w == len(cr.buf):
		cr.borrow()
	case cr.large != nil && n < smallReadBuf && cr.buffered() <= smallReadBuf:
		cr.shrink()
	}
}

// borrow moves the unread bytes into a large buffer from the pool.
func (cr *connReader) borrow() {
	cr.large = largeBufs.Get().(*[]byte)
	cr.w = copy(*cr.large, cr.buf[cr.r:cr.w])
	cr.r = 0
	cr.buf = *cr.large
}

// shrink moves the unread bytes (at most a small buffer's worth) back
// into the small buffer and returns the large one to the pool.
func (cr *connReader) shrink() {
	cr.w = copy(cr.small[:], cr.buf[cr.r:cr.w])
	cr.r = 0
	cr.buf = cr.small[:]
	largeBufs.Put(cr.large)
	cr.large = nil
}

// release returns the large buffer, if the reader holds one and nothing
// is left in it: when the connection is done, or reads bypass it.
func (cr *connReader) release() {
	if cr.large != nil && cr.r == cr.w {
		cr.r, cr.w = 0, 0
		cr.buf = cr.small[:]
		largeBufs.Put(cr.large)
		cr.large = nil
	}
}

// Peek returns the next n bytes without consuming them; n is at most
// smallReadBuf.
func (cr *connReader) Peek(n int) ([]byte, error) {
	if n > smallReadBuf {
		return nil, errPeekTooLong
	}
	for cr.buffered() < n {
		if cr.w == len(cr.buf) {
			// Room at the end for the rest: move what is unread to the front.
			cr.w = copy(cr.buf, cr.buf[cr.r:cr.w])
			cr.r = 0
		}
		if err := cr.fill(); err != nil {
			return nil, err
		}
	}
	return cr.buf[cr.r : cr.r+n], nil
}

// Discard skips n buffered bytes; n is at most what Peek returned.
func (cr *connReader) Discard(n int) (int, error) {
	n = min(n, cr.buffered())
	cr.r += n
	return n, nil
}

// drop gives the large buffer back whatever it holds: the connection is
// done reading.
func (cr *connReader) drop() {
	cr.r, cr.w = 0, 0
	cr.release()
}

// whole reports whether next would return without reading the socket: a
// frame of at most limit bytes is buffered whole, or its length is bad.
func (cr *connReader) whole(limit int) bool {
	if cr.buffered() < 4 {
		return false
	}
	n := int32(binary.BigEndian.Uint32(cr.buf[cr.r:]))
	return n < 0 || int64(n) > int64(limit) || int(n) <= cr.buffered()-4
}

// next returns the next frame's body. A frame that is whole in the
// buffer is returned in place, valid until the next read (the caller
// decodes it before reading on, and decoded records never alias it);
// any other is read into buf.
func (cr *connReader) next(buf []byte, limit int) (frame []byte, inPlace bool, err error) {
	for cr.buffered() < 4 {
		if cr.w == len(cr.buf) {
			cr.w = copy(cr.buf, cr.buf[cr.r:cr.w])
			cr.r = 0
		}
		if err := cr.fill(); err != nil {
			if err == io.EOF && cr.buffered() > 0 {
				err = io.ErrUnexpectedEOF
			}
			return buf[:0], false, err
		}
	}
	n := int32(binary.BigEndian.Uint32(cr.buf[cr.r:]))
	cr.r += 4
	if n >= 0 && int64(n) <= int64(limit) && int(n) <= cr.buffered() {
		frame = cr.buf[cr.r : cr.r+int(n) : cr.r+int(n)]
		cr.r += int(n)
		return frame, true, nil
	}
	frame, err = jute.ReadFrameBody(cr, n, buf, limit)
	return frame, false, err
}
