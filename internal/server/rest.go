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
// So a reader that has waited on an empty socket, between frames,
// through a whole scan interval is nudged: the housekeeping goroutine
// sets a read deadline in the past, which ends the read without consuming
// a byte, and the reader hands the connection to a new goroutine that
// waits in its place (resume) and then goes on as the reader. A busy
// connection is never nudged.
//
// An idle session still wakes for its pings (every third of its timeout,
// a few seconds), and handling one grows the stack again. So a resumed
// reader whose wait outlasted a scan interval is taken for an idle one:
// once it has handled what woke it, it hands over again at once, without
// waiting to be nudged. An idle session then costs one goroutine start
// per ping, and stays at 2 KiB between pings.

// errRested ends a reader goroutine that handed its connection to a
// fresh one (conn.resume).
var errRested = errors.New("server: reader rested")

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// Bits of restGate.state; the rest counts the reader's waits.
const (
	restWaiting = 1 << iota // the reader waits on an empty socket
	restResting             // in a rest (resume), where it is not nudged
	restNudged              // and a scan found it waiting since the last
	restWait                // one wait
)

// restGate is how a connection's reader and the housekeeper agree on a
// nudge. The reader marks each wait on an empty socket (wait) and clears
// the mark when the read returns (woke); the housekeeper marks a wait it
// finds unchanged since its last scan (idle, nudge), and ends it with a
// deadline unless it is a rest's.
type restGate struct {
	// mu is held while a nudge's deadline is set and while a nudged
	// reader lifts it, so that it is never lifted before it is set.
	mu    sync.Mutex
	state atomic.Uint64
	// seen is the housekeeper's: state at its last scan.
	seen uint64
}

// wait marks a new wait, a rest's if resting, and returns the mark.
func (g *restGate) wait(resting bool) uint64 {
	w := (g.state.Load() | (restWait - 1)) + 1 | restWaiting
	if resting {
		w |= restResting
	}
	g.state.Store(w)
	return w
}

// woke ends the wait marked w and reports whether a scan marked it.
func (g *restGate) woke(w uint64) bool {
	return g.state.Swap(w&^restWaiting)&restNudged != 0
}

// lift removes a nudge's deadline from nc.
func (g *restGate) lift(nc net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = nc.SetReadDeadline(time.Time{})
}

// idle reports whether the reader has been in the same wait since the
// last scan. Only the housekeeper calls it.
func (g *restGate) idle() bool {
	v := g.state.Load()
	idle := v&(restWaiting|restNudged) == restWaiting && v == g.seen
	g.seen = v
	return idle
}

// nudge marks the wait idle saw, if the reader is still in it, and ends
// it unless it is a rest's.
func (g *restGate) nudge(nc net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.CompareAndSwap(g.seen, g.seen|restNudged) && g.seen&restResting == 0 {
		_ = nc.SetReadDeadline(aLongTimeAgo)
	}
}

// await waits for the client's next bytes where the housekeeper may nudge
// the reader: on an empty socket, between frames. It reports rest when a
// nudge ended the wait before anything came.
func (c *conn) await() (rest bool, err error) {
	w := c.rest.wait(false)
	err = c.br.fill()
	if !c.rest.woke(w) {
		return false, err
	}
	c.rest.lift(c.nc)
	return errors.Is(err, os.ErrDeadlineExceeded), err
}

// handOver ends the reader goroutine: the connection is parked with the
// idle poller (no goroutine), or a fresh goroutine rests in its place.
func (c *conn) handOver() error {
	c.dropToken()
	c.srv.rests.Add(1)
	if !c.srv.idle.park(c) {
		c.srv.goroutine(c.resume)
	}
	return errRested
}

// parkedLong is how long a parked connection must have been quiet for its
// reader to park it again as soon as it has handled what woke it. An idle
// session's pings come seconds apart, and a reader kept until the next
// scan (a second) after each would keep a goroutine for a third of the
// sessions; a client that sends more often than this keeps its goroutine
// until a scan finds it idle, rather than park after every request.
const parkedLong = 50 * time.Millisecond

// wakeFromIdle is the reader of a connection the idle poller held, on a
// fresh goroutine once its socket turned readable: as resume after its
// wait. The poller may have taken the token its first request needs
// (c.token); it keeps it only if it can go on to that request without
// waiting for its client, so that clients cannot hold the server's
// tokens by sending half a request or not reading their replies.
func (c *conn) wakeFromIdle() {
	long := c.rest.woke(c.restMark) || time.Since(c.parkedAt) >= parkedLong
	err := c.br.fill()
	if err != nil || !c.br.whole(c.srv.cfg.MaxFrame) || !c.out.below(c.srv.cfg.OutboundPause, c.srv.cfg.MaxOutboundTotal) {
		c.dropToken()
	}
	if err == nil {
		err = c.readLoop(long)
	}
	if err != errRested {
		c.dropToken()
		c.finishReading(err)
	}
}

// resume is the reader in a rest: a fresh goroutine, parked on the
// socket with a minimal stack until the client sends, that then goes on
// reading as serve did. After a wait longer than a scan interval it hands
// over again as soon as the socket is empty.
func (c *conn) resume() {
	w := c.rest.wait(true)
	err := c.br.fill()
	long := c.rest.woke(w)
	if err == nil {
		err = c.readLoop(long)
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
