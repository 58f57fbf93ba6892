package server

import (
	"bytes"
	"sync/atomic"
	"testing"
)

// A reply the writer has taken but not yet reported written must not count
// against the next one: the client may have read it whole already and
// asked again (TestSlowConsumer flaked on this). A client that does not
// read still overflows once the frames queued behind the write pass max.
func TestOutqCountsOnlyQueuedFrames(t *testing.T) {
	const max = 64 << 10
	var total atomic.Int64
	q := newOutq(max, &total, func() {})
	big := bytes.Repeat([]byte("b"), 100<<10)

	if r := q.push(big); r != pushed {
		t.Fatalf("first oversized frame: %v, want pushed", r)
	}
	frames, _, _, _, _ := q.take(nil, nil) // the writer has it; the client reads it and asks again
	if r := q.push(big); r != pushed {
		t.Fatalf("a reply while the last is being written: %v, want pushed", r)
	}
	if r := q.push(make([]byte, 1)); r != overflow {
		t.Fatalf("a frame behind an oversized queued one: %v, want overflow", r)
	}
	if got, want := total.Load(), int64(2*len(big)); got != want {
		t.Fatalf("server total %d, want %d", got, want)
	}
	q.written(len(frames[0]))
	if got, want := q.queued(), len(big); got != want {
		t.Fatalf("queued %d after the write, want %d", got, want)
	}
}
