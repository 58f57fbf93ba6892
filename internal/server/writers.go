package server

import (
	"errors"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Writers. A connection's writer runs while the connection has replies
// queued and returns once its queue is empty (outq), so that an idle
// connection holds no goroutine. Started afresh for every burst of
// replies, a writer began with the smallest stack and grew it on its way
// down to writev: 5% of the server's CPU at 100% reads went to
// runtime.newstack (perf/CPU.md). A writer whose connection has nothing
// more to send now waits a while to take another connection's burst, with
// the stack it already has.

// writerLinger is how long a writer with nothing to write waits for
// another connection's burst before it exits.
const writerLinger = time.Second

// startWriter runs c's writer: on a writer waiting for work if there is
// one, else on a new goroutine.
func (s *Server) startWriter(c *conn) {
	s.bursts.Add(1)
	select {
	case s.writerc <- c:
	default:
		s.writers.Add(1)
		s.goroutine(func() { s.writer(c) })
	}
}

// writer writes c's replies, then those of the connections handed to it,
// until none comes within writerLinger or the server shuts down.
func (s *Server) writer(c *conn) {
	var idle *time.Timer
	for {
		c.write()
		if idle == nil {
			idle = time.NewTimer(writerLinger)
		} else {
			idle.Reset(writerLinger)
		}
		select {
		case c = <-s.writerc:
		case <-idle.C:
			return
		case <-s.quit:
			idle.Stop()
			return
		}
	}
}

// The reader writes its own replies. A client that pipelines reads sends
// them a few to a socket read, and the reader answers each at once. Were
// the first reply to start a writer, every read of the socket would cost
// a hand-off to another goroutine and a wake-up of another thread: at 100%
// reads, with the server not saturated (a core to itself, as shared/bench
// runs it), futex calls and the scheduler took a third of its CPU
// (perf/CPU.md).
//
// So while the reader answers requests from what it has buffered, it
// holds its queue: replies queued meanwhile, its own or any other
// goroutine's, start no writer. Before anything that may wait (a read of
// the socket, room in the queue, a token), it lets go and writes one
// batch itself with a single writev; a writer takes what is left after
// that, so that the reader never writes for longer than one batch. A
// request that another goroutine answers (a write, a sync, SASL) lets go
// too, to a writer, so that nothing queued waits on that request.

// answersItself reports whether the reader answers op without waiting
// for another goroutine, so that holding the queue over it delays nothing.
func answersItself(op jute.Op) bool {
	return !isWrite(op) && op != jute.OpAuth && op != jute.OpSASL
}

// hold holds the queue for the reader, if it does not already.
func (c *conn) hold() {
	if !c.holding {
		c.holding = true
		c.out.hold()
	}
}

// mayHold reports whether the reader may go on to its next request still
// holding the queue: that request is buffered whole and nothing will make
// the reader wait before it (readLoop).
func (c *conn) mayHold() bool {
	return c.br.whole(c.srv.cfg.MaxFrame) && !c.queuedRead &&
		c.out.below(c.srv.cfg.OutboundPause, c.srv.cfg.MaxOutboundTotal)
}

// flush lets go of the queue. What is queued goes out: written here with
// one batch if inline, by a writer otherwise or if more is queued after
// that batch.
func (c *conn) flush(inline bool) {
	if !c.holding {
		return
	}
	c.holding = false
	if !c.out.unhold() {
		return
	}
	if inline {
		err := writeLoop(c.wire, c.out, c.srv.cfg.WriteTimeout, 1)
		c.wrote(err)
		if !errors.Is(err, errWriterMore) {
			return
		}
	}
	c.srv.startWriter(c)
}
