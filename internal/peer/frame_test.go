package peer

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var wire bytes.Buffer
	in := []Message{{Kind: 0}, {Kind: 1, Data: []byte("a")}, {Kind: 255, Data: bytes.Repeat([]byte{7}, 70000)}, {Kind: 9, Data: []byte{}}}
	for _, m := range in {
		if err := writeFrame(&wire, m.Kind, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := wire.Bytes(), appendFrames(in); !bytes.Equal(got, want) {
		t.Fatalf("writeFrame and appendFrame disagree")
	}
	fr := newFrameReader(&wire, 1<<20)
	for i, want := range in {
		kind, p, _, err := fr.next(nil)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if kind != want.Kind || !bytes.Equal(p, want.Data) {
			t.Fatalf("frame %d: got kind %d, %d bytes", i, kind, len(p))
		}
	}
	if _, _, _, err := fr.next(nil); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

func appendFrames(ms []Message) []byte {
	var b []byte
	for _, m := range ms {
		b = appendFrame(b, m.Kind, m.Data)
	}
	return b
}

func TestFrameErrors(t *testing.T) {
	good := appendFrame(nil, 3, []byte("hello"))
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		wire []byte
		want error
	}{
		{"crc byte flipped", flip(len(good) - 1), ErrCorrupt},
		{"payload byte flipped", flip(6), ErrCorrupt},
		{"kind flipped", flip(4), ErrCorrupt},
		{"zero length", []byte{0, 0, 0, 0, 3}, ErrCorrupt},
		{"over max", appendFrame(nil, 3, make([]byte, 101)), ErrFrameTooLarge},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 3}, ErrFrameTooLarge},
		{"short header", good[:3], io.ErrUnexpectedEOF},
		{"short payload", good[:7], io.ErrUnexpectedEOF},
		{"short crc", good[:len(good)-2], io.ErrUnexpectedEOF},
		{"no crc", good[:len(good)-4], io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := newFrameReader(bytes.NewReader(tt.wire), 100).next(nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestFrameReusesBuffer(t *testing.T) {
	wire := appendFrame(nil, 2, []byte("abc"))
	buf := make([]byte, 0, 16)
	_, p, _, err := newFrameReader(bytes.NewReader(wire), 100).next(buf)
	if err != nil {
		t.Fatal(err)
	}
	if &p[0] != &buf[:1][0] {
		t.Fatal("payload not read into the given buffer")
	}
}

func TestHelloRoundTrip(t *testing.T) {
	h := hello{version: protoVersion, typ: connStream, from: 1<<63 + 5, to: 3}
	b := h.append(nil)
	if len(b) != helloLen {
		t.Fatalf("hello is %d bytes, want %d", len(b), helloLen)
	}
	got, err := readHello(bytes.NewReader(b))
	if err != nil || got != h {
		t.Fatalf("got %+v, %v; want %+v", got, err, h)
	}
	for _, bad := range [][]byte{b[:10], append([]byte("ZOOX"), b[4:]...), nil} {
		if _, err := readHello(bytes.NewReader(bad)); !errors.Is(err, ErrBadHandshake) {
			t.Errorf("readHello(%q) = %v, want ErrBadHandshake", bad, err)
		}
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame decoder: it must never
// panic, never accept a frame over its limit, and every frame it accepts
// must re-encode to exactly the bytes it consumed.
func FuzzReadFrame(f *testing.F) {
	f.Add(appendFrame(nil, 1, []byte("raft")))
	f.Add(appendFrames([]Message{{Kind: 0}, {Kind: 2, Data: []byte("x")}, {Kind: 3, Data: make([]byte, 300)}}))
	f.Add([]byte{0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Add(appendFrame(nil, 1, []byte("raft"))[:7])
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		fr := newFrameReader(r, limit)
		for {
			start := len(data) - r.Len()
			kind, p, _, err := fr.next(nil)
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFrameTooLarge) &&
					!errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error class: %v", err)
				}
				return
			}
			if len(p) > limit {
				t.Fatalf("accepted %d-byte payload over limit %d", len(p), limit)
			}
			end := len(data) - r.Len()
			if enc := appendFrame(nil, kind, p); !bytes.Equal(enc, data[start:end]) {
				t.Fatalf("re-encoding differs from input")
			}
		}
	})
}

// FuzzReadHello: the handshake decoder must not panic, and a hello it
// accepts must re-encode to its input.
func FuzzReadHello(f *testing.F) {
	f.Add(hello{version: 1, typ: connLink, from: 3, to: 1}.append(nil))
	f.Add([]byte("ZOOP"))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readHello(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadHandshake) {
				t.Fatalf("error does not wrap ErrBadHandshake: %v", err)
			}
			return
		}
		if enc := h.append(nil); !bytes.Equal(enc, data[:helloLen]) {
			t.Fatalf("re-encoding differs from input")
		}
		_ = ackStatus(data[len(data)-1]).String()
	})
}
