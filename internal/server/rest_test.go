package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// restingServer starts a server whose housekeeper never nudges readers
// on its own: the test scans with nudgeIdle, so it knows when they rest.
func restingServer(t *testing.T) *testServer {
	return startServer(t, func(c *Config) { c.RestAfter = time.Hour })
}

// restReaders scans as the housekeeper does until the server's readers
// have rested want times in all.
func (ts *testServer) restReaders(t *testing.T, want uint64) {
	t.Helper()
	waitFor(t, ioTimeout, func() error {
		ts.srv.nudgeIdle()
		if n := ts.srv.rests.Load(); n < want {
			return fmt.Errorf("%d readers rested, want %d", n, want)
		}
		return nil
	})
}

// waitingReaders counts the readers that wait on an empty socket
// without resting.
func (ts *testServer) waitingReaders() int {
	ts.srv.mu.RLock()
	defer ts.srv.mu.RUnlock()
	n := 0
	for _, c := range ts.srv.conns {
		if c.rest.state.Load()&(restWaiting|restResting) == restWaiting {
			n++
		}
	}
	return n
}

// restingReaders counts the readers in a rest: parked with the idle
// poller, or waiting in a fresh goroutine.
func (ts *testServer) restingReaders() int {
	ts.srv.mu.RLock()
	defer ts.srv.mu.RUnlock()
	n := 0
	for _, c := range ts.srv.conns {
		if c.rest.state.Load()&(restWaiting|restResting) == restWaiting|restResting {
			n++
		}
	}
	return n
}

// A session whose reader rested is served as before: its watch fires
// while it rests, and its requests are answered after, over plaintext
// and over TLS, rest after rest.
func TestRestedReaderServes(t *testing.T) {
	e := newTLSEnv(t)
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			ts := restingServer(t)
			var c *rawClient
			if tlsOn {
				addr := serveTLS(t, ts, &Secure{TLS: e.serverConfig(0)})
				var err error
				if c, err = sessionOver(t, addr, e.clientConfig(nil)); err != nil {
					t.Fatal(err)
				}
			} else {
				c = newSession(t, ts.addr)
			}
			writer := newSession(t, ts.addr)
			c.create("/r", []byte("0"), 0)
			c.mustCall(jute.OpGetData, &jute.PathWatch{Path: "/r", Watch: true}, nil, jute.OK)

			ts.restReaders(t, 2) // both sessions' readers
			writer.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/r", Data: []byte("1"), Version: -1}, nil, jute.OK)
			if ev := c.readReply().event(t); ev.Type != jute.EventNodeDataChanged || ev.Path != "/r" {
				t.Fatalf("event %+v, want a data change of /r", ev)
			}
			for i := range 3 {
				if got := c.getData("/r"); string(got) != "1" {
					t.Fatalf("after rest %d: getData = %q", i+1, got)
				}
				ts.restReaders(t, ts.srv.rests.Load()+1)
			}
		})
	}
}

// A reader is nudged only between frames: one whose client stopped in the
// middle of a request keeps reading it, and answers it when the rest
// comes.
func TestRestNeverSplitsAFrame(t *testing.T) {
	ts := restingServer(t)
	c := newSession(t, ts.addr)
	ts.restReaders(t, 1) // it rested once: the nudges work
	frame := c.requestFrame(jute.OpExists, &jute.PathWatch{Path: "/"})
	c.writeRaw(frame[:7])
	waitFor(t, ioTimeout, func() error {
		if n := ts.waitingReaders(); n != 0 {
			return fmt.Errorf("%d readers wait on an empty socket", n)
		}
		return nil
	})
	for range 4 {
		ts.srv.nudgeIdle()
	}
	if n := ts.srv.rests.Load(); n != 1 {
		t.Fatalf("%d rests, want 1: a reader rested in the middle of a frame", n)
	}
	c.writeRaw(frame[7:])
	if r := c.readReply(); r.hdr.Err != jute.OK {
		t.Fatalf("exists / answered %v", r.hdr.Err)
	}
}

// An idle session wakes only for its pings: a reader that rested through
// a scan interval hands over again as soon as it has answered one, so it
// is back at a fresh goroutine's stack without waiting to be nudged.
func TestRestedReaderHandsOverAfterAPing(t *testing.T) {
	ts := restingServer(t)
	c := newSession(t, ts.addr)
	ts.restReaders(t, 1)
	// Rests are counted as they begin: wait until it waits, so that the
	// scans see it.
	waitFor(t, ioTimeout, func() error {
		if n := ts.restingReaders(); n != 1 {
			return fmt.Errorf("%d readers resting, want 1", n)
		}
		return nil
	})
	// Two scans: the first sees the rest's wait, the second marks it long.
	ts.srv.nudgeIdle()
	ts.srv.nudgeIdle()
	c.mustCall(jute.OpPing, nil, nil, jute.OK)
	waitFor(t, ioTimeout, func() error {
		if n := ts.srv.rests.Load(); n != 2 {
			return fmt.Errorf("%d rests, want 2: the reader did not hand over after the ping", n)
		}
		return nil
	})
	// A short rest is a busy client's: its reader waits in place.
	c.mustCall(jute.OpPing, nil, nil, jute.OK)
	waitFor(t, ioTimeout, func() error {
		if n := ts.waitingReaders(); n != 1 {
			return fmt.Errorf("%d readers wait in place, want 1", n)
		}
		return nil
	})
	if n := ts.srv.rests.Load(); n != 2 {
		t.Fatalf("%d rests after a ping that came soon, want 2", n)
	}
}
