package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Framing. Every packet on a client connection, both ways, is a 4-byte
// big-endian length followed by that many bytes:
//
//	+--------+------------------------------+
//	| len    | header record | body record  |
//	| 4 B BE | len bytes                    |
//	+--------+------------------------------+
//
// The connect request and response have no header record.

// DefaultMaxBuffer is Apache's default jute.maxbuffer (0xfffff bytes), the
// largest frame its server accepts.
const DefaultMaxBuffer = 0xfffff

// ErrFrameTooLarge means a frame's length prefix exceeds the limit
// (jute.maxbuffer). Apache's server closes the connection on it.
var ErrFrameTooLarge = errors.New("jute: frame exceeds max length")

// frameChunk bounds how far ReadFrame grows its buffer ahead of the bytes
// that have actually arrived, so a peer that claims a large frame and
// sends nothing costs at most this much.
const frameChunk = 64 << 10

// ReadFrame reads one frame from r and returns its body (without the length
// prefix). It reads into buf when the frame fits in cap(buf), else into a
// larger slice; either way the result can be passed back as buf on the next
// call, so a connection reads all its frames without allocating. The body
// is only valid until then.
//
// A length above limit fails with ErrFrameTooLarge and a negative length
// with ErrBadLength, both before any allocation; Apache's server accepts a
// length equal to jute.maxbuffer and rejects one above it. EOF before the
// first byte is io.EOF, EOF inside a frame is io.ErrUnexpectedEOF. On error
// the result is buf[:0] (possibly grown), still reusable.
func ReadFrame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	if cap(buf) < 4 {
		buf = make([]byte, 0, 512)
	}
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return buf[:0], err
	}
	n := int32(binary.BigEndian.Uint32(buf[:4]))
	return ReadFrameBody(r, n, buf, limit)
}

// ReadFrameBody is ReadFrame for a frame whose length n the caller has read
// already, as a server does for the first frame of a connection, where the
// four bytes may be a four-letter word ("ruok") instead of a length.
func ReadFrameBody(r io.Reader, n int32, buf []byte, limit int) ([]byte, error) {
	if n < 0 {
		return buf[:0], fmt.Errorf("%w: frame length %d", ErrBadLength, n)
	}
	if int64(n) > int64(limit) {
		return buf[:0], fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, limit)
	}
	size := int(n)
	buf = buf[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(size, max(2*cap(buf), frameChunk)))
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):min(size, cap(buf))])
		buf = buf[:len(buf)+k]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf[:0], err
		}
	}
	return buf, nil
}

// BeginFrame appends a placeholder for a frame length to w and returns its
// offset, for EndFrame. Records encoded in between form the frame's body,
// so a reply header and body go into one buffer with no copying.
func (w *Writer) BeginFrame() int {
	off := len(w.B)
	w.B = append(w.B, 0, 0, 0, 0)
	return off
}

// EndFrame fills in the length of the frame begun at off: the number of
// bytes written since BeginFrame.
func (w *Writer) EndFrame(off int) {
	binary.BigEndian.PutUint32(w.B[off:], uint32(len(w.B)-off-4))
}

// writers recycles the Writer that AppendFrame hands to Encode methods,
// which would otherwise escape to the heap on every call.
var writers = sync.Pool{New: func() any { return new(Writer) }}

// AppendFrame appends to dst one frame holding recs encoded back to back
// (nil records are skipped) and returns the extended slice.
func AppendFrame(dst []byte, recs ...Record) []byte {
	return appendFrame(dst, FrameSize(recs...), func(w *Writer) {
		for _, rec := range recs {
			if rec != nil {
				rec.Encode(w)
			}
		}
	})
}

// AppendReply is AppendFrame for a reply: hdr, then resp if it is not
// nil. The header is taken by value and encoded directly, so a server
// answering a request does not allocate one (through AppendFrame's
// Records it escaped to the heap, once per reply).
func AppendReply(dst []byte, hdr ReplyHeader, resp Record) []byte {
	return appendFrame(dst, FrameSize(resp)+replyHeaderSize, func(w *Writer) {
		hdr.Encode(w)
		if resp != nil {
			resp.Encode(w)
		}
	})
}

// appendFrame appends a frame whose body encode writes, about need bytes
// with the length, through a Writer from the pool.
func appendFrame(dst []byte, need int, encode func(w *Writer)) []byte {
	if cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	w := writers.Get().(*Writer)
	w.B = dst
	off := w.BeginFrame()
	encode(w)
	w.EndFrame(off)
	dst = w.B
	w.B = nil
	writers.Put(w)
	return dst
}
