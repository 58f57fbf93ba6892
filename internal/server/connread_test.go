package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// chunkReader returns its data in reads of the given sizes, in turn, as a
// socket returns what has arrived.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data))
	if len(r.sizes) > 0 {
		n = min(n, r.sizes[r.i%len(r.sizes)])
		r.i++
	}
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// frames returns count frames of assorted sizes, and their concatenation.
func testFrames(rng *rand.Rand, count int) ([][]byte, []byte) {
	var all []byte
	var out [][]byte
	for i := range count {
		body := make([]byte, rng.IntN(3000))
		for j := range body {
			body[j] = byte(i + j)
		}
		out = append(out, body)
		all = appendRawFrame(all, body)
	}
	return out, all
}

// appendRawFrame appends body as a frame: its length, then its bytes.
func appendRawFrame(dst, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(body))), body...)
}

// TestConnReaderFrames reads frames through connReader over a socket that
// delivers any split of the stream, and gets every frame back whole.
func TestConnReaderFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want, stream := testFrames(rng, 300)
	for _, sizes := range [][]int{nil, {1}, {3, 700}, {511, 512, 513}, {64 << 10}, {100, 70000, 5}} {
		cr := newConnReader(&chunkReader{data: bytes.Clone(stream), sizes: sizes})
		var buf []byte
		for i, w := range want {
			frame, err := jute.ReadFrame(cr, buf, 1<<20)
			if err != nil {
				t.Fatalf("sizes %v: frame %d: %v", sizes, i, err)
			}
			if !bytes.Equal(frame, w) {
				t.Fatalf("sizes %v: frame %d differs", sizes, i)
			}
			buf = frame
		}
		if _, err := jute.ReadFrame(cr, buf, 1<<20); err != io.EOF {
			t.Fatalf("sizes %v: after the last frame: %v, want EOF", sizes, err)
		}
		if cr.large != nil {
			t.Errorf("sizes %v: the large buffer is held after the stream ended", sizes)
		}
	}
}

// TestConnReaderGivesBackLargeBuffer: a pipelining client makes the
// reader borrow a large buffer, and a quiet one makes it give it back.
func TestConnReaderGivesBackLargeBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	_, burst := testFrames(rng, 100)
	ping := appendRawFrame(nil, []byte{1, 2, 3})
	src := &chunkReader{data: append(bytes.Clone(burst), ping...), sizes: []int{len(burst), len(ping)}}
	cr := newConnReader(src)
	var buf []byte
	for range 100 {
		var err error
		if buf, err = jute.ReadFrame(cr, buf, 1<<20); err != nil {
			t.Fatal(err)
		}
		if cr.large == nil && cr.buffered() > 0 {
			t.Fatal("a burst larger than the small buffer was read into the small one")
		}
	}
	if _, err := jute.ReadFrame(cr, buf, 1<<20); err != nil {
		t.Fatal(err)
	}
	if cr.large != nil {
		t.Error("the large buffer is held after a read of one small frame")
	}
}

func TestConnReaderPeek(t *testing.T) {
	cr := newConnReader(&chunkReader{data: []byte("ruok and more"), sizes: []int{1}})
	head, err := cr.Peek(4)
	if err != nil || string(head) != "ruok" {
		t.Fatalf("Peek(4) = %q, %v", head, err)
	}
	if _, err := cr.Discard(4); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(cr)
	if err != nil || string(rest) != " and more" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if _, err := cr.Peek(smallReadBuf + 1); err == nil {
		t.Error("Peek longer than the small buffer succeeded")
	}
}

// FuzzConnReader checks that reading through connReader, with any split
// of the stream, returns the stream's bytes in order.
func FuzzConnReader(f *testing.F) {
	f.Add([]byte("hello"), uint16(1), uint16(3))
	f.Add(bytes.Repeat([]byte{7}, 70000), uint16(600), uint16(40000))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint16) {
		src := &chunkReader{data: bytes.Clone(data), sizes: []int{int(a)%2000 + 1, int(b) + 1}}
		cr := newConnReader(src)
		var got []byte
		p := make([]byte, int(a)%700+1)
		for {
			n, err := cr.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, want %d, or they differ", len(got), len(data))
		}
	})
}
