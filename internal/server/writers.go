package server

import "time"

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
