package server

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// outq is a connection's outbound queue: encoded frames waiting for the
// writer goroutine, or for the reader's own write (conn.flush). It is
// bounded in bytes twice over. A client that does not read its replies is
// not read either once its queue passes the pause mark (backpressure, as
// Apache stops reading such a socket): its reader waits in waitBelow, so
// replies cannot pile up. A reply is never refused: its request was
// admitted, and what admission lets through is bounded (conn.readLoop).
// Watch events are queued whatever the client does, so past max the
// connection is closed (a slow consumer) instead of growing the server's
// memory; no frame is ever dropped from a live connection.
type outq struct {
	mu     sync.Mutex
	frames [][]byte
	// owners[i] is the pooled buffer frames[i] was encoded into, which
	// the writer gives back once it is written (replybuf.go); nil for
	// any other frame.
	owners  []*[]byte
	size    int // bytes in frames (a pooled frame counts its buffer's cap)
	writing int // bytes taken by the writer and not yet written
	max     int
	closed  bool
	// closeAfter asks the writer to close the connection once everything
	// queued so far is written (closeSession, a refused handshake).
	closeAfter bool
	// running is true while a writer goroutine drains the queue. There
	// is none while the queue is empty: an idle connection costs one
	// goroutine, its reader, not two (issue 17). The first frame queued
	// after that starts one with spawn.
	running bool
	// held is true while the connection's reader holds the queue
	// (conn.hold): frames queued meanwhile start no writer, as the
	// reader writes them itself when it lets go (conn.flush).
	held  bool
	spawn func()
	space chan struct{} // capacity 1: wakes a reader waiting in waitBelow
	// total counts the bytes queued or being written over every
	// connection of the server.
	total *atomic.Int64
}

// newOutq returns a queue of at most max bytes whose spawn starts a
// goroutine running writeLoop (and, when it ends other than idle, closing
// the connection).
func newOutq(max int, total *atomic.Int64, spawn func()) *outq {
	if total == nil {
		total = new(atomic.Int64)
	}
	return &outq{max: max, spawn: spawn, space: make(chan struct{}, 1), total: total}
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
//
// Only the frames still queued count against max, not those the writer has
// taken: a client that has read a reply whole may ask again before the
// writer goroutine has even returned from the write, and its next reply
// must not find the last one still counted. The memory held stays bounded
// all the same: the writer holds at most one batch, itself at most max (or
// one oversized frame alone), so a connection holds under 2*max plus a
// frame.
func (q *outq) push(frame []byte) pushResult { return q.pushOwned(frame, nil) }

// pushOwned is push for a frame encoded into owner, a pooled buffer that
// the queue now holds: it goes back to its pool once the frame is written.
func (q *outq) pushOwned(frame []byte, owner *[]byte) pushResult {
	return q.pushBounded(frame, owner, true)
}

// pushReply is pushOwned for the reply to a request: it never overflows.
// The reader admitted the request only below the pause mark, and bounds
// the reads it lets wait behind writes, whose replies come in a burst
// when the writes are answered (conn.readLoop). Closing a connection
// over replies it was let ask for would fail a client that reads.
func (q *outq) pushReply(frame []byte, owner *[]byte) pushResult {
	return q.pushBounded(frame, owner, false)
}

// pushBounded queues a frame; bounded, it refuses one past max.
func (q *outq) pushBounded(frame []byte, owner *[]byte, bounded bool) pushResult {
	q.mu.Lock()
	switch {
	case q.closed || q.closeAfter:
		q.mu.Unlock()
		return finished
	case bounded && q.size+frameCost(frame, owner) > q.max && q.size > 0:
		q.mu.Unlock()
		return overflow
	}
	q.add(frame, owner)
	start := !q.held && q.startWriter()
	q.mu.Unlock()
	if start {
		q.spawn()
	}
	return pushed
}

// startWriter reports whether the caller must start a writer, and marks
// one running; q.mu is held.
func (q *outq) startWriter() bool {
	if q.running {
		return false
	}
	q.running = true
	return true
}

// add queues frame; q.mu is held.
func (q *outq) add(frame []byte, owner *[]byte) {
	q.frames = append(q.frames, frame)
	q.owners = append(q.owners, owner)
	n := frameCost(frame, owner)
	q.size += n
	q.total.Add(int64(n))
}

// frameCost is the memory a queued frame holds: a pooled frame holds its
// whole buffer, so that the bounds stay bounds on memory.
func frameCost(frame []byte, owner *[]byte) int {
	if owner != nil {
		return cap(frame)
	}
	return len(frame)
}

// finish queues a last frame (if any) and asks the writer to close the
// connection after it.
func (q *outq) finish(frame []byte) {
	q.mu.Lock()
	if !q.closed && !q.closeAfter {
		if frame != nil {
			q.add(frame, nil)
		}
		q.closeAfter = true
	}
	start := q.closeAfter && !q.closed && q.startWriter()
	q.mu.Unlock()
	if start {
		q.spawn()
	}
}

// hold keeps frames queued from starting a writer until unhold.
func (q *outq) hold() {
	q.mu.Lock()
	q.held = true
	q.mu.Unlock()
}

// unhold ends a hold. It reports whether the caller must now write what
// is queued: then no writer runs, and the caller is marked as the one.
func (q *outq) unhold() (write bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.held = false
	if q.closed || len(q.frames) == 0 && !q.closeAfter {
		return false
	}
	return q.startWriter()
}

// idle reports whether the queue has nothing more for the writer, and if
// so marks no writer running, as take does when it finds it empty.
func (q *outq) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopIfIdle()
}

// stopIfIdle marks no writer running if there is nothing more to write,
// dropping a frame list grown past maxKeptFrames, and reports whether it
// did; q.mu is held.
func (q *outq) stopIfIdle() bool {
	if len(q.frames) > 0 || q.closeAfter || q.closed {
		return false
	}
	q.running = false
	if cap(q.frames) > maxKeptFrames {
		q.frames, q.owners = nil, nil
	}
	return true
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
// It reports ok false if done closes first, and whether it waited.
func (q *outq) waitBelow(pause int, limit int64, done <-chan struct{}) (ok, waited bool) {
	for {
		if q.below(pause, limit) {
			return true, waited
		}
		waited = true
		select {
		case <-q.space:
		case <-done:
			return false, waited
		}
	}
}

// below reports whether the reader may go on now, as waitBelow would.
func (q *outq) below(pause int, limit int64) bool {
	n := q.queued()
	return n <= pause && (n == 0 || q.total.Load() <= limit)
}

// maxKeptFrames bounds the frame list an idle queue keeps for reuse.
const maxKeptFrames = 64

// take swaps out everything queued. last is true when the writer should
// close the connection after writing it. The frames count as queued until
// the writer reports them written. idle is true when there is nothing to
// do: the writer must return, and the next push starts another.
func (q *outq) take(spare [][]byte, spareOwners []*[]byte) (frames [][]byte, owners []*[]byte, last, closed, idle bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopIfIdle() {
		return nil, nil, false, false, true
	}
	frames, q.frames = q.frames, spare[:0]
	owners, q.owners = q.owners, spareOwners[:0]
	q.writing += q.size
	q.size = 0
	return frames, owners, q.closeAfter, q.closed, false
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
	q.frames, q.owners = nil, nil
	q.total.Add(-int64(q.size))
	q.size = 0
	q.mu.Unlock()
	// A running writer sees closed at its next take; none is needed.
}

// errWriterIdle ends writeLoop when the queue is empty, and errWriterMore
// when it has written as many batches as it was let and more are queued.
var (
	errWriterIdle = errors.New("server: nothing to write")
	errWriterMore = errors.New("server: more to write")
)

// writeLoop writes queued frames with one writev per batch until the queue
// is empty (errWriterIdle), closed, a write fails, or a closing frame has
// been written; with batches > 0, after at most that many batches
// (errWriterMore: the caller is still the queue's writer). Unless it
// returns errWriterIdle or errWriterMore, the caller closes the
// connection after it (which also ends the reader).
func writeLoop(nc net.Conn, q *outq, timeout time.Duration, batches int) error {
	var (
		spare       [][]byte
		spareOwners []*[]byte
	)
	for {
		frames, owners, last, closed, idle := q.take(spare, spareOwners)
		if idle {
			return errWriterIdle
		}
		n := 0
		for i, f := range frames {
			n += frameCost(f, owners[i])
		}
		if closed {
			q.written(n)
			return nil
		}
		if len(frames) > 0 {
			_ = nc.SetWriteDeadline(time.Now().Add(timeout))
			err := writeFrames(nc, frames)
			// The write has returned, written or not: nothing refers
			// to the pooled buffers any more.
			recycleReplies(owners)
			q.written(n)
			if err != nil {
				return err
			}
		}
		if last {
			return nil
		}
		clear(frames)
		spare, spareOwners = frames, owners
		if batches--; batches == 0 {
			if q.idle() {
				return errWriterIdle
			}
			return errWriterMore
		}
	}
}
