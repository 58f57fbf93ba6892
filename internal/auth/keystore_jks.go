package auth

import (
	"encoding/binary"
	"errors"
)

// checkJKS walks a JKS file's structure before the JKS library reads it:
// the library allocates whatever length or count a file declares, so a
// corrupt or half-written store (a reload can catch one mid-copy) could
// ask for gigabytes. Every declared length must fit in what is left.
//
// The format: magic 0xFEEDFEED, version (1 or 2), entry count; each entry
// a tag (1 private key, 2 trusted certificate), a UTF alias (u16 length),
// a timestamp (8 bytes); a key entry has the encrypted key (u32 length),
// a certificate count and the certificates; a certificate is, in version
// 2, a UTF type, then the encoding (u32 length). A 20-byte digest ends it.
func checkJKS(b []byte) error {
	r := jksReader{b: b}
	if r.u32() != 0xFEEDFEED {
		return errors.New("not a JKS store")
	}
	version := r.u32()
	if version != 1 && version != 2 {
		return errors.New("unknown JKS version")
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		tag := r.u32()
		r.skip(int(r.u16())) // alias
		r.skip(8)            // timestamp
		switch tag {
		case 1:
			r.skip(int(r.u32())) // encrypted key
			for c := r.count(); c > 0 && r.err == nil; c-- {
				r.cert(version)
			}
		case 2:
			r.cert(version)
		default:
			return errors.New("unknown JKS entry tag")
		}
	}
	r.skip(20) // digest
	return r.err
}

type jksReader struct {
	b   []byte
	err error
}

var errJKSTruncated = errors.New("JKS store truncated or corrupt")

func (r *jksReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errJKSTruncated
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *jksReader) skip(n int) { r.take(n) }

func (r *jksReader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *jksReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// count reads a count of items of at least four bytes each, which must
// fit in what is left.
func (r *jksReader) count() int {
	n := int(r.u32())
	if n > len(r.b)/4 {
		r.err = errJKSTruncated
		return 0
	}
	return n
}

func (r *jksReader) cert(version uint32) {
	if version == 2 {
		r.skip(int(r.u16())) // type
	}
	r.skip(int(r.u32()))
}
