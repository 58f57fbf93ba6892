package server

import (
	"net"
	"sync"
	"time"
)

// outq is a connection's outbound queue: encoded frames waiting for the
// writer goroutine. It is bounded in bytes; a client that does not read its
// replies and events fast enough is disconnected (a slow consumer) instead
// of growing the server's memory, and no frame is ever dropped from a live
// connection.
type outq struct {
	mu     sync.Mutex
	frames [][]byte
	size   int
	max    int
	closed bool
	// closeAfter asks the writer to close the connection once everything
	// queued so far is written (closeSession, a refused handshake).
	closeAfter bool
	kick       chan struct{} // capacity 1: wakes the writer
}

func newOutq(max int) *outq {
	return &outq{max: max, kick: make(chan struct{}, 1)}
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
	case q.size+len(frame) > q.max && len(q.frames) > 0:
		q.mu.Unlock()
		return overflow
	}
	q.frames = append(q.frames, frame)
	q.size += len(frame)
	q.mu.Unlock()
	q.wake()
	return pushed
}

// finish queues a last frame (if any) and asks the writer to close the
// connection after it.
func (q *outq) finish(frame []byte) {
	q.mu.Lock()
	if !q.closed && !q.closeAfter {
		if frame != nil {
			q.frames = append(q.frames, frame)
			q.size += len(frame)
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

// take swaps out everything queued. last is true when the writer should
// close the connection after writing it.
func (q *outq) take(spare [][]byte) (frames [][]byte, last, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	frames, q.frames = q.frames, spare[:0]
	q.size = 0
	return frames, q.closeAfter, q.closed
}

func (q *outq) close() {
	q.mu.Lock()
	q.closed = true
	q.frames = nil
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
		if closed {
			return nil
		}
		if len(frames) > 0 {
			_ = nc.SetWriteDeadline(time.Now().Add(timeout))
			if err := writeFrames(nc, frames); err != nil {
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
