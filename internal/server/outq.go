package server

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// outq is a connection's outbound queue: encoded frames waiting for the
// writer goroutine. It is bounded in bytes twice over. A client that does
// not read its replies is not read either once its queue passes the
// pause mark (backpressure, as Apache stops reading such a socket): its
// reader waits in waitBelow, so replies cannot pile up. Watch events are
// queued whatever the client does, so past max the connection is closed
// (a slow consumer) instead of growing the server's memory; no frame is
// ever dropped from a live connection.
type outq struct {
	mu      sync.Mutex
	frames  [][]byte
	size    int // bytes in frames
	writing int // bytes taken by the writer and not yet written
	max     int
	closed  bool
	// closeAfter asks the writer to close the connection once everything
	// queued so far is written (closeSession, a refused handshake).
	closeAfter bool
	kick       chan struct{} // capacity 1: wakes the writer
	space      chan struct{} // capacity 1: wakes a reader waiting in waitBelow
	// total counts the bytes queued or being written over every
	// connection of the server.
	total *atomic.Int64
}

func newOutq(max int, total *atomic.Int64) *outq {
	if total == nil {
		total = new(atomic.Int64)
	}
	return &outq{max: max, kick: make(chan struct{}, 1), space: make(chan struct{}, 1), total: total}
}

// pushResult says what push did with a frame.
type pushResult int

const (
	pushed   pushResult = iota
	finished            // the connection is closed or closing: frame dropped
	overflow            // over the bound: the caller closes the connection
)

// push queues a frame unless the queue is closed or finishing, or the frame
// would exceed the bound (a slow consumer).
func (q *outq) push(frame []byte) pushResult {
	q.mu.Lock()
	switch {
	case q.closed || q.closeAfter:
		q.mu.Unlock()
		return finished
	case q.size+q.writing+len(frame) > q.max && q.size+q.writing > 0:
		q.mu.Unlock()
		return overflow
	}
	q.add(frame)
	q.mu.Unlock()
	q.wake()
	return pushed
}

// add queues frame; q.mu is held.
func (q *outq) add(frame []byte) {
	q.frames = append(q.frames, frame)
	q.size += len(frame)
	q.total.Add(int64(len(frame)))
}

// finish queues a last frame (if any) and asks the writer to close the
// connection after it.
func (q *outq) finish(frame []byte) {
	q.mu.Lock()
	if !q.closed && !q.closeAfter {
		if frame != nil {
			q.add(frame)
		}
		q.closeAfter = true
	}
	q.mu.Unlock()
	q.wake()
}

func (q *outq) wake() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// queued returns the bytes queued or being written.
func (q *outq) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size + q.writing
}

// waitBelow blocks while more than pause bytes are queued or being
// written, or any are while the whole server is over its limit (so that a
// client that reads stays served while the ones that do not are paused).
// It reports false if done closes first.
func (q *outq) waitBelow(pause int, limit int64, done <-chan struct{}) bool {
	for {
		n := q.queued()
		if n <= pause && (n == 0 || q.total.Load() <= limit) {
			return true
		}
		select {
		case <-q.space:
		case <-done:
			return false
		}
	}
}

// take swaps out everything queued. last is true when the writer should
// close the connection after writing it. The frames count as queued until
// the writer reports them written.
func (q *outq) take(spare [][]byte) (frames [][]byte, last, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	frames, q.frames = q.frames, spare[:0]
	q.writing += q.size
	q.size = 0
	return frames, q.closeAfter, q.closed
}

// written reports that the writer is done with n bytes it took, written or
// not, and wakes a reader waiting for room.
func (q *outq) written(n int) {
	q.mu.Lock()
	q.writing -= n
	q.mu.Unlock()
	q.total.Add(-int64(n))
	select {
	case q.space <- struct{}{}:
	default:
	}
}

func (q *outq) close() {
	q.mu.Lock()
	q.closed = true
	q.frames = nil
	q.total.Add(-int64(q.size))
	q.size = 0
	q.mu.Unlock()
	q.wake()
}

// writeLoop writes queued frames with one writev per batch until the queue
// is closed, a write fails, or a closing frame has been written. The caller
// closes the connection after it (which also ends the reader).
func writeLoop(nc net.Conn, q *outq, timeout time.Duration) error {
	var spare [][]byte
	for range q.kick {
		frames, last, closed := q.take(spare)
		n := 0
		for _, f := range frames {
			n += len(f)
		}
		if closed {
			q.written(n)
			return nil
		}
		if len(frames) > 0 {
			_ = nc.SetWriteDeadline(time.Now().Add(timeout))
			err := writeFrames(nc, frames)
			q.written(n)
			if err != nil {
				return err
			}
		}
		if last {
			return nil
		}
		clear(frames)
		spare = frames
	}
	return nil
}
