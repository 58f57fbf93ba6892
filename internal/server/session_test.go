package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// closeSession is answered before the server closes the connection, after
// every request pipelined ahead of it; the session's ephemerals are gone
// for everyone, and the session cannot be resumed.
// Ref: programmer's guide, "Ephemeral Nodes".
func TestCloseSession(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			other := newSession(t, tg.addr)
			root := testRoot(t, other)
			other.mustCall(jute.OpExists, &jute.PathWatch{Path: root + "/e1", Watch: true}, nil, jute.NoNode)

			c := newSession(t, tg.addr)
			var out []byte
			xids := make([]int32, 4)
			for i, r := range []struct {
				op  jute.Op
				rec jute.Record
			}{
				{jute.OpCreate, createReq(root+"/e1", nil, jute.FlagEphemeral)},
				{jute.OpCreate, createReq(root+"/e2", nil, jute.FlagEphemeral)},
				{jute.OpGetData, &jute.PathWatch{Path: root + "/e1"}},
				{jute.OpCloseSession, nil},
			} {
				var frame []byte
				xids[i], frame = c.request(r.op, r.rec)
				out = append(out, frame...)
			}
			c.writeRaw(out)
			got := c.expectClosed()
			if len(got) != len(xids) {
				t.Fatalf("got %d replies %v before the close, want %d", len(got), got, len(xids))
			}
			for i, r := range got {
				if r.hdr.Xid != xids[i] || r.hdr.Err != jute.OK {
					t.Fatalf("reply %d: %v, want xid %d OK", i, r, xids[i])
				}
			}
			if len(got[3].body) != 0 {
				t.Errorf("closeSession reply has a body %x", got[3].body)
			}

			// The ephemerals are gone. The other session's exist watch
			// fired once, for the create: watches are one-time triggers.
			events, r := other.readUntil(other.send(jute.OpExists, &jute.PathWatch{Path: root + "/e1"}))
			if r.hdr.Err != jute.NoNode {
				t.Errorf("e1 survived closeSession: %v", r)
			}
			if want := (jute.WatcherEvent{Type: jute.EventNodeCreated, State: jute.StateSyncConnected, Path: root + "/e1"}); len(events) != 1 || events[0] != want {
				t.Errorf("watcher got %+v, want %+v", events, want)
			}
			if _, ok := other.exists(root + "/e2"); ok {
				t.Error("e2 survived closeSession")
			}
			// The closed session cannot be resumed.
			back := dialRaw(t, tg.addr)
			resp, _, err := back.tryHandshake(c.reattachReq())
			if err != nil || resp.TimeOut != 0 || resp.SessionID != 0 {
				t.Fatalf("reattaching a closed session: %+v, %v; want a refusal", resp, err)
			}
			back.expectClosedSilently()
		})
	}
}

// expiryConfig makes sessions expire fast: a client may ask for 200 ms.
// Sessions that must stay alive ask for 1000 ms, so that a test process
// stalled by the race detector or a loaded machine does not lose them.
func expiryConfig(c *Config) {
	c.TickTime = 100 * time.Millisecond
	c.MinSessionTimeout = 200
	c.MaxSessionTimeout = 1000
}

// A session that goes silent expires after its timeout: its ephemerals go,
// its connection is closed, and it cannot be resumed. A session that keeps
// pinging lives on. Ref: programmer's guide, "ZooKeeper Sessions".
func TestSessionExpiry(t *testing.T) {
	ts := startServer(t, expiryConfig)
	silent := dialRaw(t, ts.addr)
	if got := silent.handshake(connectReq(200)).TimeOut; got != 200 {
		t.Fatalf("negotiated %d ms", got)
	}
	alive := dialRaw(t, ts.addr)
	alive.handshake(connectReq(1000))
	root := testRoot(t, alive)
	alive.create(root+"/alive", nil, jute.FlagEphemeral)
	silent.create(root+"/silent", nil, jute.FlagEphemeral)
	start := time.Now() // the silent session's last sign of life
	alive.mustCall(jute.OpExists, &jute.PathWatch{Path: root + "/silent", Watch: true}, nil, jute.OK)

	// Ping every 50 ms until the silent session is gone and the pinging
	// one has outlived it by two seconds, two of its own timeouts.
	ping := time.NewTicker(50 * time.Millisecond)
	defer ping.Stop()
	var expiredAfter time.Duration
	deadline := time.After(20 * time.Second)
	for expiredAfter == 0 || time.Since(start) < expiredAfter+2*time.Second {
		select {
		case <-ping.C:
		case <-deadline:
			t.Fatalf("silent session not expired after 20s (expired after %v)", expiredAfter)
		}
		events, r := alive.readUntil(alive.send(jute.OpPing, nil))
		if r.hdr.Err != jute.OK {
			t.Fatalf("ping: %v", r)
		}
		for _, ev := range events {
			if ev.Type != jute.EventNodeDeleted || ev.Path != root+"/silent" {
				t.Fatalf("unexpected event %+v", ev)
			}
			expiredAfter = time.Since(start)
		}
	}
	// The server heard the create a little before start.
	if expiredAfter < 190*time.Millisecond {
		t.Errorf("session expired after %v, before its 200 ms timeout", expiredAfter)
	}
	t.Logf("silent session expired after %v", expiredAfter)

	silent.expectClosedSilently()
	back := dialRaw(t, ts.addr)
	resp, _, err := back.tryHandshake(silent.reattachReq())
	if err != nil || resp.TimeOut != 0 || resp.SessionID != 0 {
		t.Fatalf("reattaching an expired session: %+v, %v; want a refusal", resp, err)
	}
	if _, ok := alive.exists(root + "/alive"); !ok {
		t.Fatal("the pinging session's ephemeral is gone")
	}
	if _, ok := alive.exists(root + "/silent"); ok {
		t.Fatal("the expired session's ephemeral is still there")
	}
}

// A session whose connection dropped survives a reconnect within its
// timeout (its clock restarts on the reattach), and expires if no one
// reattaches.
func TestSessionSurvivesDisconnect(t *testing.T) {
	ts := startServer(t, expiryConfig)
	watcher := newSession(t, ts.addr)
	root := testRoot(t, watcher)

	c := dialRaw(t, ts.addr)
	c.handshake(connectReq(1000))
	eph := root + "/e"
	c.create(eph, nil, jute.FlagEphemeral)
	for range 5 {
		c.close()
		next := dialRaw(t, ts.addr)
		next.handshake(c.reattachReq())
		next.getData("/")
		c = next
	}
	if stat, ok := watcher.exists(eph); !ok || stat.EphemeralOwner != c.sid {
		t.Fatalf("ephemeral lost across reconnects: %v %#x", ok, stat.EphemeralOwner)
	}
	c.close()
	waitFor(t, 10*time.Second, func() error {
		if _, ok := watcher.exists(eph); ok {
			return errors.New("ephemeral of the abandoned session still there")
		}
		return nil
	})
	back := dialRaw(t, ts.addr)
	if resp, _, err := back.tryHandshake(c.reattachReq()); err != nil || resp.TimeOut != 0 {
		t.Fatalf("reattach after expiry: %+v, %v", resp, err)
	}
}

// Only traffic counts as a sign of life: a connection that opens a session
// and then sends only half a frame does not keep the session alive.
func TestSessionExpiresWithHalfAFrame(t *testing.T) {
	ts := startServer(t, expiryConfig)
	watcher := newSession(t, ts.addr)
	root := testRoot(t, watcher)
	c := dialRaw(t, ts.addr)
	c.handshake(connectReq(200))
	c.create(root+"/e", nil, jute.FlagEphemeral)
	c.writeRaw(frameHeader(100)) // and never the rest
	c.expectClosedSilently()
	waitFor(t, 10*time.Second, func() error {
		if _, ok := watcher.exists(root + "/e"); ok {
			return fmt.Errorf("ephemeral still there")
		}
		return nil
	})
}

// Requests pipelined behind closeSession must not act for the closed
// session: above all, an ephemeral created after the close would belong to
// no live session and never go away.
func TestRequestsAfterCloseSession(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			other := newSession(t, tg.addr)
			root := testRoot(t, other)
			c := newSession(t, tg.addr)
			_, closeFrame := c.request(jute.OpCloseSession, nil)
			_, create := c.request(jute.OpCreate, createReq(root+"/late", nil, jute.FlagEphemeral))
			_, create2 := c.request(jute.OpCreate, createReq(root+"/late2", nil, jute.FlagPersistent))
			c.writeRaw(append(append(closeFrame, create...), create2...))
			for _, r := range c.expectClosed() {
				if r.hdr.Err == jute.OK && r.hdr.Xid != 1 {
					t.Errorf("request after closeSession succeeded: %v", r)
				}
			}
			// A sync orders this after anything the closed session did.
			other.mustCall(jute.OpSync, &jute.PathRequest{Path: root}, nil, jute.OK)
			if stat, ok := other.exists(root + "/late"); ok {
				t.Errorf("ephemeral created after closeSession, owner %#x", stat.EphemeralOwner)
			}
			if _, ok := other.exists(root + "/late2"); ok {
				t.Errorf("node created after closeSession")
			}
		})
	}
}
