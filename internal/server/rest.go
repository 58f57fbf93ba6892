package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Resting idle readers.
//
// A connection's reader goroutine spends most of a session's life parked
// in a read of a quiet socket. Its stack grew to 4 KiB the first time it
// handled a request, and the runtime never shrinks a parked reader's
// stack back: it halves a stack only when less than a quarter of it is in
// use, counting an 800-byte guard, so a 4 KiB stack must use under 224
// bytes. That stack was half of what an idle session cost (issue 17: 8.4
// KB, against a target of 8). A fresh goroutine parked in the same read
// fits in the minimum 2 KiB.
//
// So a reader that has waited on an empty socket through a whole rest
// interval is nudged: the housekeeping goroutine sets a read deadline in
// the past, which ends the read without consuming a byte, and the reader
// hands the connection to a new goroutine that waits in its place and
// then goes on as the reader. A busy connection is never nudged, and an
// idle one costs a goroutine start and two deadline changes per interval
// in which it woke.

// errRested ends a reader goroutine that handed its connection to a
// fresh one (conn.resume).
var errRested = errors.New("server: reader rested")

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// Bits of restGate.state; the rest counts the reader's waits.
const (
	restWaiting = 1 << iota // the reader waits on an empty socket
	restNudged              // and the housekeeper has ended its read
	restWait                // one wait
)

// restGate is how a connection's reader and the housekeeper agree on a
// nudge. The reader marks each wait on an empty socket (wait) and clears
// the mark when the read returns (woke); the housekeeper nudges a reader
// whose mark has not changed between two scans (idle, nudge).
type restGate struct {
	// mu is held while a nudge's deadline is set and while a nudged
	// reader lifts it, so that it is never lifted before it is set.
	mu    sync.Mutex
	state atomic.Uint64
	// seen is the housekeeper's: state at its last scan.
	seen uint64
}

// wait marks a new wait and returns the mark.
func (g *restGate) wait() uint64 {
	w := (g.state.Load() | (restWait - 1)) + 1 | restWaiting
	g.state.Store(w)
	return w
}

// woke ends the wait marked w. If the reader was nudged, it lifts the
// deadline on nc and reports true.
func (g *restGate) woke(w uint64, nc net.Conn) bool {
	if g.state.Swap(w&^restWaiting)&restNudged == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = nc.SetReadDeadline(time.Time{})
	return true
}

// idle reports whether the reader has been in the same wait since the
// last scan. Only the housekeeper calls it.
func (g *restGate) idle() bool {
	v := g.state.Load()
	idle := v&(restWaiting|restNudged) == restWaiting && v == g.seen
	g.seen = v
	return idle
}

// nudge ends the wait idle saw, if the reader is still in it.
func (g *restGate) nudge(nc net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.CompareAndSwap(g.seen, g.seen|restNudged) {
		_ = nc.SetReadDeadline(aLongTimeAgo)
	}
}

// await waits for the client's next bytes where the housekeeper may nudge
// the reader: on an empty socket, between frames. It reports rest when a
// nudge ended the wait before anything came.
func (c *conn) await() (rest bool, err error) {
	w := c.rest.wait()
	err = c.br.fill()
	if c.rest.woke(w, c.nc) && errors.Is(err, os.ErrDeadlineExceeded) {
		return true, nil
	}
	return false, err
}

// resume is the reader after a rest: a fresh goroutine, parked on the
// socket with a minimal stack until the client sends, that then goes on
// reading as serve did.
func (c *conn) resume() {
	err := c.br.fill()
	if err == nil {
		err = c.readLoop()
	}
	if err != errRested {
		c.finishReading(err)
	}
}

// nudgeIdle nudges the readers that have waited on a quiet socket since
// the last scan. It belongs to the housekeeping goroutine.
func (s *Server) nudgeIdle() {
	var idle []*conn
	s.mu.RLock()
	for _, c := range s.conns {
		if c.rest.idle() {
			idle = append(idle, c)
		}
	}
	s.mu.RUnlock()
	for _, c := range idle {
		c.rest.nudge(c.nc)
	}
}
