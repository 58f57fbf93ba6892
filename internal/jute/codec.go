// Package jute is ZooKeeper's wire encoding and the records of its client
// protocol.
//
// Jute is big-endian and untagged:
//
//	int     4 bytes, two's complement
//	long    8 bytes, two's complement
//	boolean 1 byte, 0 or 1
//	buffer  int length, then the bytes; length -1 is a nil buffer
//	ustring int length, then UTF-8 bytes; length -1 is the empty string
//	vector  int count, then the elements; count -1 is a nil vector
//
// Each record has an explicit Encode and Decode; there is no reflection.
// Decoding never trusts a length read from the wire: a length that runs past
// the end of the input is an error (ErrShort), not an allocation.
//
// Apache's reading of a null (-1) ustring, buffer or vector is mirrored as
// "", nil and nil. Writing is the client protocol's practice rather than
// jute's full range: the records of the client protocol never write a null
// vector (see records_codec.go), because Apache's server dereferences some
// vectors without a null check and go-zookeeper cannot read a -1 count.
package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrShort means the input ended inside a record, including a length
// prefix that claims more bytes than remain.
var ErrShort = errors.New("jute: record is truncated")

// ErrBadLength means a length prefix was negative other than -1 (null).
var ErrBadLength = errors.New("jute: bad length prefix")

// Record is a protocol record with an explicit wire form.
type Record interface {
	Encode(w *Writer)
	Decode(r *Reader)
}

// Writer appends jute-encoded values to a byte slice. It never fails.
type Writer struct {
	B []byte
}

// Reset empties w, keeping its storage for reuse.
func (w *Writer) Reset() { w.B = w.B[:0] }

// Int appends a 4-byte int.
func (w *Writer) Int(v int32) { w.B = binary.BigEndian.AppendUint32(w.B, uint32(v)) }

// Long appends an 8-byte long.
func (w *Writer) Long(v int64) { w.B = binary.BigEndian.AppendUint64(w.B, uint64(v)) }

// Bool appends a 1-byte boolean.
func (w *Writer) Bool(v bool) {
	if v {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

// Buffer appends a length-prefixed byte buffer; nil is encoded as length -1.
func (w *Writer) Buffer(b []byte) {
	if b == nil {
		w.Int(-1)
		return
	}
	w.Int(int32(len(b)))
	w.B = append(w.B, b...)
}

// String appends a length-prefixed string.
func (w *Writer) String(s string) {
	w.Int(int32(len(s)))
	w.B = append(w.B, s...)
}

// Strings appends a vector of strings; nil is encoded as count -1.
func (w *Writer) Strings(v []string) {
	if v == nil {
		w.Int(-1)
		return
	}
	w.Int(int32(len(v)))
	for _, s := range v {
		w.String(s)
	}
}

// StringList appends a vector of strings, writing nil as an empty vector.
// The client protocol's records use it: Apache never sends a null list, its
// server throws on a null list in setWatches, and go-zookeeper cannot read
// a -1 count.
func (w *Writer) StringList(v []string) {
	w.Int(int32(len(v)))
	for _, s := range v {
		w.String(s)
	}
}

// Reader decodes jute values from a byte slice. The first error is sticky:
// once a read fails every later read returns a zero value, and Err reports
// the failure, so a record's Decode can read all its fields and check once.
type Reader struct {
	b     []byte
	off   int
	err   error
	alias bool
}

// NewReader returns a Reader over b. Values it returns never alias b (Buffer
// copies), so b may be reused as soon as decoding is done: a server reads
// every frame into the same buffer while decoded requests wait in queues.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// NewAliasReader is NewReader for a caller that keeps b unchanged for as
// long as the decoded values live: buffers it returns alias b, saving a copy.
func NewAliasReader(b []byte) *Reader { return &Reader{b: b, alias: true} }

// Reset makes r read b from the start with no error, keeping its aliasing
// mode, so one Reader can serve many frames without allocating.
func (r *Reader) Reset(b []byte) { r.b, r.off, r.err = b, 0, nil }

// Err returns the first decoding error, or nil.
func (r *Reader) Err() error { return r.err }

// Len returns the number of bytes not yet read.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Offset returns the number of bytes read so far.
func (r *Reader) Offset() int { return r.off }

// Fail records err as the reader's error if it has none yet.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.err = ErrShort
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

// Int reads a 4-byte int.
func (r *Reader) Int() int32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// Long reads an 8-byte long.
func (r *Reader) Long() int64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// Bool reads a 1-byte boolean; any non-zero byte is true, as in Java.
func (r *Reader) Bool() bool {
	p := r.take(1)
	return p != nil && p[0] != 0
}

// length reads a length prefix for items of at least min bytes each and
// checks it against what is left. It returns -1 for a nil value.
func (r *Reader) length(min int) int {
	n := r.Int()
	if r.err != nil {
		return 0
	}
	if n == -1 {
		return -1
	}
	if n < 0 {
		r.err = fmt.Errorf("%w: %d", ErrBadLength, n)
		return 0
	}
	if min > 0 && int64(n)*int64(min) > int64(r.Len()) {
		r.err = fmt.Errorf("%w: length %d with %d bytes left", ErrShort, n, r.Len())
		return 0
	}
	return int(n)
}

// Buffer reads a length-prefixed buffer; length -1 yields nil and length 0 a
// non-nil empty slice, so a null buffer survives a round trip (Apache returns
// a znode created with null data as null). The result is a copy unless r was
// made by NewAliasReader.
func (r *Reader) Buffer() []byte {
	n := r.length(1)
	if n < 0 || r.err != nil {
		return nil
	}
	if n == 0 {
		return []byte{}
	}
	p := r.take(n)
	if r.alias {
		return p
	}
	return append([]byte(nil), p...)
}

// OwnedBuffer is Buffer for a caller that keeps what it returns: a copy
// whatever r's mode, made once (Buffer already copies unless r aliases).
func (r *Reader) OwnedBuffer() []byte {
	b := r.Buffer()
	if r.alias && b != nil {
		b = append(make([]byte, 0, len(b)), b...)
	}
	return b
}

// String reads a length-prefixed string; length -1 yields "".
func (r *Reader) String() string {
	n := r.length(1)
	if n <= 0 || r.err != nil {
		return ""
	}
	return string(r.take(n))
}

// Strings reads a vector of strings; count -1 yields nil.
func (r *Reader) Strings() []string {
	n := r.length(4)
	if n < 0 || r.err != nil {
		return nil
	}
	v := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		v = append(v, r.String())
	}
	return v
}

// VectorLen reads the count of a vector whose elements take at least min
// bytes each; -1 means a nil vector. Use it to decode vectors of records.
func (r *Reader) VectorLen(min int) int { return r.length(min) }

// Marshal encodes rec into a new byte slice.
func Marshal(rec Record) []byte {
	var w Writer
	rec.Encode(&w)
	return w.B
}

// ErrTrailing means bytes were left over after a record that Unmarshal
// decoded; UnmarshalPrefix tolerates them.
var ErrTrailing = errors.New("jute: trailing bytes after record")

// Unmarshal decodes rec from b. It fails if b is short or has bytes left over.
func Unmarshal(b []byte, rec Record) error {
	r := NewReader(b)
	rec.Decode(r)
	if r.err != nil {
		return r.err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w: %d bytes", ErrTrailing, r.Len())
	}
	return nil
}

// UnmarshalPrefix decodes rec from the front of b and ignores any bytes after
// it. That is how Apache reads every record of the client protocol (the
// connect request and response, request bodies, replies): its deserializers
// stop at the record's last field and the rest of the frame is dropped.
func UnmarshalPrefix(b []byte, rec Record) error {
	r := NewReader(b)
	rec.Decode(r)
	return r.err
}

// MaxFrame bounds a frame length so that int conversions cannot overflow.
const MaxFrame = math.MaxInt32
