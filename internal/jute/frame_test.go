package jute

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func frameOf(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestReadFrame(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 3*frameChunk+17)
	tests := []struct {
		name  string
		in    []byte
		buf   []byte
		limit int
		want  []byte
		err   error
	}{
		{"empty frame", frameOf(nil), nil, 10, []byte{}, nil},
		{"fits buf", frameOf([]byte("hello")), make([]byte, 0, 64), 10, []byte("hello"), nil},
		{"nil buf", frameOf([]byte("hello")), nil, 10, []byte("hello"), nil},
		{"grows past chunk", frameOf(big), make([]byte, 0, 8), DefaultMaxBuffer, big, nil},
		// Ref: Apache NIOServerCnxn.readLength: len > jute.maxbuffer is an error, len == max is not.
		{"exactly limit", frameOf([]byte("12345")), nil, 5, []byte("12345"), nil},
		{"over limit", frameOf([]byte("123456")), nil, 5, nil, ErrFrameTooLarge},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xfe}, nil, 5, nil, ErrBadLength},
		{"clean EOF", nil, nil, 5, nil, io.EOF},
		{"EOF in length", []byte{0, 0}, nil, 5, nil, io.ErrUnexpectedEOF},
		{"EOF in body", frameOf([]byte("hello"))[:6], nil, 10, nil, io.ErrUnexpectedEOF},
		{"EOF in grown body", frameOf(big)[:2*frameChunk], nil, DefaultMaxBuffer, nil, io.ErrUnexpectedEOF},
		{"EOF right after length", frameOf([]byte("hello"))[:4], nil, 10, nil, io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// OneByteReader makes every read short, as a socket may.
			got, err := ReadFrame(iotest.OneByteReader(bytes.NewReader(tc.in)), tc.buf, tc.limit)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				if len(got) != 0 {
					t.Fatalf("error with %d bytes returned", len(got))
				}
				return
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(tc.want))
			}
		})
	}
}

func TestReadFrameSequence(t *testing.T) {
	var stream []byte
	bodies := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("b"), 1000), []byte("c")}
	for _, b := range bodies {
		stream = append(stream, frameOf(b)...)
	}
	r := bytes.NewReader(stream)
	var buf []byte
	for i, want := range bodies {
		got, err := ReadFrame(r, buf, 2000)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %q, %v", i, got, err)
		}
		buf = got
	}
	if _, err := ReadFrame(r, buf, 2000); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

// A huge length is refused before any allocation, and a claimed length that
// never arrives costs at most one chunk.
func TestReadFrameHugeLengthDoesNotAllocate(t *testing.T) {
	in := []byte{0x7f, 0xff, 0xff, 0xff}
	buf := make([]byte, 0, 16)
	perRun := bytesPerRun(100, func() {
		if _, err := ReadFrame(bytes.NewReader(in), buf, DefaultMaxBuffer); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	})
	if perRun > 512 {
		t.Fatalf("%d bytes allocated per refused frame", perRun)
	}

	claim := binary.BigEndian.AppendUint32(nil, 1<<30) // 1 GiB claimed, 10 bytes sent
	claim = append(claim, make([]byte, 10)...)
	perRun = bytesPerRun(10, func() {
		if _, err := ReadFrame(bytes.NewReader(claim), nil, 1<<30); err != io.ErrUnexpectedEOF {
			t.Fatal(err)
		}
	})
	if perRun > 2*frameChunk {
		t.Fatalf("%d bytes allocated for a frame that sent 10 bytes", perRun)
	}
}

// Reading frames into a reused buffer allocates nothing.
func TestReadFrameReuseAllocs(t *testing.T) {
	stream := frameOf(bytes.Repeat([]byte("x"), 1024))
	r := bytes.NewReader(stream)
	buf := make([]byte, 0, 2048)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(stream)
		got, err := ReadFrame(r, buf, DefaultMaxBuffer)
		if err != nil || len(got) != 1024 {
			t.Fatal(err)
		}
		buf = got
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func TestReadFrameBodyAfterFourLetterCheck(t *testing.T) {
	stream := frameOf([]byte("body"))
	r := bytes.NewReader(stream)
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		t.Fatal(err)
	}
	// The server would test n against "ruok", "stat", ... here.
	got, err := ReadFrameBody(r, int32(binary.BigEndian.Uint32(n[:])), nil, 100)
	if err != nil || string(got) != "body" {
		t.Fatalf("%q, %v", got, err)
	}
}

func TestAppendFrame(t *testing.T) {
	h := ReplyHeader{Xid: 3, Zxid: 0x10, Err: OK}
	body := GetDataResponse{Data: []byte("abc"), Stat: testStat}
	got := AppendFrame([]byte("prefix"), &h, nil, &body)
	want := append([]byte("prefix"), frameOf(append(Marshal(&h), Marshal(&body)...))...)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}

	// Frames read back by ReadFrame.
	r := bytes.NewReader(got[len("prefix"):])
	f, err := ReadFrame(r, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var h2 ReplyHeader
	var b2 GetDataResponse
	rd := NewReader(f)
	h2.Decode(rd)
	b2.Decode(rd)
	if rd.Err() != nil || h2 != h || string(b2.Data) != "abc" || b2.Stat != testStat || rd.Len() != 0 {
		t.Fatalf("read back %+v %+v %v", h2, b2, rd.Err())
	}
}

func TestWriterFrames(t *testing.T) {
	var w Writer
	for i := 0; i < 2; i++ {
		off := w.BeginFrame()
		h := ReplyHeader{Xid: int32(i)}
		h.Encode(&w)
		w.EndFrame(off)
	}
	one := frameOf(Marshal(&ReplyHeader{Xid: 0}))
	two := frameOf(Marshal(&ReplyHeader{Xid: 1}))
	if !bytes.Equal(w.B, append(one, two...)) {
		t.Fatalf("got %x", w.B)
	}
}

// Encoding a reply into a reused buffer allocates nothing.
func TestAppendFrameAllocs(t *testing.T) {
	h := &ReplyHeader{Xid: 1, Zxid: 2}
	body := &GetDataResponse{Data: make([]byte, 1024), Stat: testStat}
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendFrame(buf[:0], h, body)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
	var w Writer
	w.B = buf
	allocs = testing.AllocsPerRun(100, func() {
		w.Reset()
		off := w.BeginFrame()
		h.Encode(&w)
		body.Encode(&w)
		w.EndFrame(off)
	})
	if allocs != 0 {
		t.Fatalf("Writer: %v allocations per frame", allocs)
	}
}
