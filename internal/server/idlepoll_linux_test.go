package server

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// parkedCount is how many connections the idle poller holds.
func (ts *testServer) parkedCount() int {
	p := &ts.srv.idle
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}

func (ts *testServer) waitParked(t *testing.T, want int) {
	t.Helper()
	waitFor(t, ioTimeout, func() error {
		ts.srv.nudgeIdle()
		if n := ts.parkedCount(); n != want {
			return fmt.Errorf("%d connections parked, want %d", n, want)
		}
		return nil
	})
}

// Ref: issue 17 (a closed session's memory is returned). Idle plaintext
// sessions are parked with the idle poller and hold no goroutine, so a
// wave of them leaves no goroutine descriptors behind. A parked session
// is served when its client sends, is parked again once idle, and is
// finished when it closes, whether the server closes it or the client
// hangs up.
func TestIdleSessionsHoldNoGoroutine(t *testing.T) {
	ts := restingServer(t)
	const n = 200
	before := runtime.NumGoroutine()
	cs := make([]*rawClient, n)
	for i := range cs {
		cs[i] = newSession(t, ts.addr)
	}
	ts.waitParked(t, n)
	if g := runtime.NumGoroutine() - before; g > n/10 {
		t.Fatalf("%d goroutines more with %d parked sessions, want at most %d", g, n, n/10)
	}

	// Served while parked: a watch fires to a parked session, and the
	// requests of every session are answered.
	cs[0].create("/p", []byte("0"), 0)
	cs[1].mustCall(jute.OpGetData, &jute.PathWatch{Path: "/p", Watch: true}, nil, jute.OK)
	ts.waitParked(t, n)
	cs[0].mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/p", Data: []byte("1"), Version: -1}, nil, jute.OK)
	if ev := cs[1].readReply().event(t); ev.Type != jute.EventNodeDataChanged || ev.Path != "/p" {
		t.Fatalf("event %+v, want a data change of /p", ev)
	}
	for _, c := range cs {
		c.mustCall(jute.OpPing, nil, nil, jute.OK)
	}
	ts.waitParked(t, n)

	// The client hangs up: the poller wakes its reader, which ends the
	// connection.
	conns, _ := ts.sessionCounts()
	cs[2].nc.Close()
	waitFor(t, ioTimeout, func() error {
		if c, _ := ts.sessionCounts(); c != conns-1 {
			return fmt.Errorf("%d connections, want %d", c, conns-1)
		}
		return nil
	})
	if p := ts.parkedCount(); p != n-1 {
		t.Fatalf("%d parked after a client hung up, want %d", p, n-1)
	}

	// The server closes the others (as it does when it loses its quorum):
	// their readers are taken out of the poller and finished, or the
	// poller would hold them for ever.
	ts.srv.closeClients("test")
	waitFor(t, ioTimeout, func() error {
		if c, _ := ts.sessionCounts(); c != 0 {
			return fmt.Errorf("%d connections, want none", c)
		}
		return nil
	})
	if p := ts.parkedCount(); p != 0 {
		t.Fatalf("%d connections still parked after the server closed them", p)
	}
}

// Ref: issue 17. The poller wakes a parked reader only with the token of
// the global outstanding limit its request needs. At the limit, clients
// that all send at once wait in the poller's set, not in a goroutine each
// (10,000 sessions closing together made 9,000 such goroutines, whose
// descriptors the runtime keeps), and are served once tokens come back.
func TestWokenReadersWaitForTokens(t *testing.T) {
	const limit, n = 4, 100
	ts := startServer(t, func(c *Config) {
		c.RestAfter = time.Hour
		c.MaxOutstanding = limit
	})
	cs := make([]*rawClient, n)
	for i := range cs {
		cs[i] = newSession(t, ts.addr)
	}
	ts.waitParked(t, n)
	before := runtime.NumGoroutine()
	for range limit {
		ts.srv.tokens <- struct{}{} // the server at its limit
	}
	for _, c := range cs {
		c.send(jute.OpPing, nil)
	}
	waitFor(t, ioTimeout, func() error {
		if w := ts.srv.metrics.throttleWaits.Value(); w == 0 {
			return fmt.Errorf("no wait for a token yet")
		}
		return nil
	})
	if p := ts.parkedCount(); p != n {
		t.Fatalf("%d of %d sessions still parked while the server is at its limit: readers were woken without a token", p, n)
	}
	if g := runtime.NumGoroutine() - before; g > n/10 {
		t.Fatalf("%d goroutines more while %d sessions wait for a token, want at most %d", g, n, n/10)
	}
	for range limit {
		<-ts.srv.tokens
	}
	for _, c := range cs {
		if r := c.readReply(); r.hdr.Xid != jute.XidPing || r.hdr.Err != jute.OK {
			t.Fatalf("reply %v, want a ping's", r)
		}
	}
	ts.waitParked(t, n)
	if k := len(ts.srv.tokens); k != 0 {
		t.Fatalf("%d tokens held after every request was answered", k)
	}
}

// A reader the poller woke for half a request gives its token back: its
// client may never send the rest, and the server's other clients must
// not wait for it.
func TestHalfARequestHoldsNoToken(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.RestAfter = time.Hour
		c.MaxOutstanding = 1
	})
	a, b := newSession(t, ts.addr), newSession(t, ts.addr)
	ts.waitParked(t, 2)
	frame := a.requestFrame(jute.OpPing, nil)
	a.writeRaw(frame[:len(frame)-1])
	ts.waitParked(t, 1) // a's reader is awake, with the only token
	b.mustCall(jute.OpExists, &jute.PathWatch{Path: "/"}, nil, jute.OK)
	a.writeRaw(frame[len(frame)-1:])
	if r := a.readReply(); r.hdr.Xid != jute.XidPing || r.hdr.Err != jute.OK {
		t.Fatalf("reply %v, want a ping's", r)
	}
}
