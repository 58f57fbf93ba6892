package server

import (
	"sync"

	"github.com/zoohq/zoo/internal/shrink"
)

// registry holds every request in flight that waits on something other
// than its connection's reader:
//
//   - writes (and syncs, a handshake's session txn, a restore) waiting for
//     the log, keyed by the tag the replica's event carries back;
//   - per open connection, the reads that came while that connection's
//     earlier writes were in flight, in arrival order: each is due once
//     the writes sent before it are answered (FIFO, DESIGN decision 6).
//
// It only keeps requests; it never completes one. Its methods hand back
// the requests that left it, and the caller completes them after the
// call, so no reply is queued and no connection closed under its lock.
//
// Lock: mu guards every field. It is a leaf: nothing else is locked, no
// callback runs and nothing blocks while it is held, so it may be taken
// under Server.mu or the replica's state lock.
type registry struct {
	mu     sync.Mutex
	next   uint64
	writes map[uint64]*request // by tag
	peak   int                 // writes' peak size, for shrink.Map
	conns  map[uint64]*fifo    // by connection id, while the connection is open
	// connsPeak is conns' peak size: Go maps never shrink, so it is
	// rebuilt when it empties (shrink.Map; issue 17).
	connsPeak int
}

// fifo is one connection's writes in flight and the reads behind them.
type fifo struct {
	writes  int           // submitted, not yet answered
	reads   []*request    // waiting; request.ahead counts the writes before each
	drained chan struct{} // closed when writes drops to 0, if someone waits
}

func newRegistry() *registry {
	return &registry{writes: make(map[uint64]*request), conns: make(map[uint64]*fifo)}
}

// open starts tracking a connection's requests.
func (g *registry) open(conn uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conns[conn] = &fifo{}
}

// close stops tracking a connection and returns the reads that were
// waiting on it, for the caller to fail. Its writes stay, by tag, until
// the replica reports their end; a later request of the connection is
// refused (addWrite, addRead).
func (g *registry) close(conn uint64) []*request {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.conns[conn]
	if f == nil {
		return nil
	}
	delete(g.conns, conn)
	g.conns = shrink.Map(g.conns, &g.connsPeak)
	if f.drained != nil {
		close(f.drained)
	}
	return f.reads
}

// addWrite registers a request that is about to be submitted and returns
// its tag. A request of a connection (r.conn != nil) counts as one of its
// writes in flight; ok is false, and nothing is registered, if the
// connection is closed.
func (g *registry) addWrite(r *request) (tag uint64, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.conn != nil {
		f := g.conns[r.conn.ID()]
		if f == nil {
			return 0, false
		}
		f.writes++
	}
	g.next++
	r.tag = g.next
	g.writes[r.tag] = r
	return r.tag, true
}

// take removes the write with the given tag and returns it, or nil if it
// is not here (tag 0: a request of another server; or one taken before).
// Its connection still counts it in flight until writeDone, so that the
// reads behind it are answered after it.
func (g *registry) take(tag uint64) *request {
	if tag == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.writes[tag]
	if r != nil {
		delete(g.writes, tag)
		g.writes = shrink.Map(g.writes, &g.peak)
	}
	return r
}

// writeDone records that one of a connection's writes was answered and
// returns the reads that were waiting for it, oldest first.
func (g *registry) writeDone(conn uint64) []*request {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.conns[conn]
	if f == nil || f.writes == 0 {
		return nil
	}
	f.writes--
	if f.writes == 0 && f.drained != nil {
		close(f.drained)
		f.drained = nil
	}
	n := 0
	for _, r := range f.reads {
		if r.ahead--; r.ahead == 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	due := make([]*request, n)
	copy(due, f.reads)
	f.reads = append(f.reads[:0], f.reads[n:]...)
	if len(f.reads) == 0 && cap(f.reads) > maxKeptReads {
		f.reads = nil // a burst's backing array is not kept
	}
	return due
}

// maxKeptReads bounds the waiting-reads array an idle connection keeps.
const maxKeptReads = 64

// addRead queues a read behind its connection's writes in flight, and
// reports whether it did: if none is in flight (wait false) the caller
// answers it now. ok is false if the connection is closed.
func (g *registry) addRead(r *request) (wait, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.conns[r.conn.ID()]
	if f == nil {
		return false, false
	}
	if f.writes == 0 {
		return false, true
	}
	r.ahead = f.writes
	f.reads = append(f.reads, r)
	return true, true
}

// readsBehind returns how many reads of the connection wait behind its
// writes.
func (g *registry) readsBehind(conn uint64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.conns[conn]; f != nil {
		return len(f.reads)
	}
	return 0
}

// drained returns a channel closed once the connection has no write in
// flight (or is closed), or nil if that is already so.
func (g *registry) drained(conn uint64) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.conns[conn]
	if f == nil || f.writes == 0 {
		return nil
	}
	if f.drained == nil {
		f.drained = make(chan struct{})
	}
	return f.drained
}

// takeAll empties the registry of writes and returns them: at shutdown,
// once the replica has stopped and reported everything it knew of, what
// is left was lost between submit and the replica's stop.
func (g *registry) takeAll() []*request {
	g.mu.Lock()
	defer g.mu.Unlock()
	all := make([]*request, 0, len(g.writes))
	for _, r := range g.writes {
		all = append(all, r)
	}
	clear(g.writes)
	return all
}

// size returns the writes and the waiting reads it holds.
func (g *registry) size() (writes, reads int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.conns {
		reads += len(f.reads)
	}
	return len(g.writes), reads
}

// inFlight returns how many of a connection's writes are in flight (cons'
// queued count).
func (g *registry) inFlight(conn uint64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.conns[conn]; f != nil {
		return f.writes
	}
	return 0
}
