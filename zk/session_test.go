package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ref: programmer's guide sections 3 and 4: when a connection breaks the
// client reconnects with its session id and password, the session and its
// ephemeral nodes survive, and watches are re-registered and "triggered if
// needed": changes made while the client was away arrive as events.
func TestReconnectKeepsSessionAndWatches(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		p := newProxy(t, e.addr)
		states := newStateLog()
		c := e.connectTo(p.addr(), states.option())
		other := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		for _, n := range []string{"a", "c", "p"} {
			_, _, err := other.Create(ctx, e.p(n), nil, Persistent, acl)
			must(t, "create "+n, err)
		}
		_, _, err := c.Create(ctx, e.p("eph"), nil, Ephemeral, acl)
		must(t, "create ephemeral", err)
		_, _, dch, err := c.GetW(ctx, e.p("a"))
		must(t, "getW", err)
		_, _, ech, err := c.ExistsW(ctx, e.p("b"))
		must(t, "existsW", err)
		_, _, cch, err := c.ChildrenW(ctx, e.p("c"))
		must(t, "childrenW", err)
		_, _, quiet, err := c.GetW(ctx, e.p("c"))
		must(t, "getW quiet", err)
		pch, err := c.AddWatch(ctx, e.p("p"), WatchPersistent)
		must(t, "addWatch", err)
		id := c.SessionID()

		p.setRefuse(true)
		p.cut()
		mark := states.wait(t, StateDisconnected, 0, 20*time.Second)
		states.wait(t, StateConnecting, mark, 20*time.Second)
		_, err = other.Set(ctx, e.p("a"), []byte("x"), -1)
		must(t, "set a", err)
		_, _, err = other.Create(ctx, e.p("b"), nil, Persistent, acl)
		must(t, "create b", err)
		_, _, err = other.Create(ctx, e.p("c/k"), nil, Persistent, acl)
		must(t, "create c/k", err)
		noEvent(t, dch)

		p.setRefuse(false)
		states.wait(t, StateConnected, mark, 30*time.Second)
		if c.SessionID() != id {
			t.Fatalf("session %x after reconnect, was %x", c.SessionID(), id)
		}
		expectEvent(t, dch, EventNodeDataChanged, e.p("a"))
		expectEvent(t, ech, EventNodeCreated, e.p("b"))
		expectEvent(t, cch, EventNodeChildrenChanged, e.p("c"))
		if ok, _, err := other.Exists(ctx, e.p("eph")); !ok || err != nil {
			t.Errorf("ephemeral node lost with the connection: %v %v", ok, err)
		}
		// Watches whose nodes did not change stay set, on the server too.
		noEvent(t, quiet)
		_, err = other.Set(ctx, e.p("c"), nil, -1)
		must(t, "set c", err)
		expectEvent(t, quiet, EventNodeDataChanged, e.p("c"))
		// The persistent watch is told of the gap, in which it may have
		// missed changes (the server does not replay them), and goes on.
		for _, want := range []State{StateDisconnected, StateConnected} {
			if ev := recv(t, pch); ev.Type != EventSession || ev.State != want || ev.Path != e.p("p") {
				t.Errorf("persistent watch got %+v, want a session event %v", ev, want)
			}
		}
		_, err = other.Set(ctx, e.p("p"), nil, -1)
		must(t, "set p", err)
		expectEvent(t, pch, EventNodeDataChanged, e.p("p"))

		got, _ := states.snapshot()
		want := []State{StateConnecting, StateConnected, StateDisconnected, StateConnecting, StateConnected}
		if !slices.Equal(got, want) {
			t.Errorf("states %v, want %v", got, want)
		}
	})
}

// Ref: programmer's guide section 3: the client "generates connectionloss"
// for operations pending when it disconnects. A request that was sent is
// not sent again: the caller decides, since a create may have been applied.
func TestInFlightCallsFailWithConnectionLoss(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		p := newProxy(t, e.addr)
		states := newStateLog()
		c := e.connectTo(p.addr(), states.option())
		other := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()

		// Requests that never reach the server.
		p.setHoldUp(true)
		var order []int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Add(1)
			err := c.CreateAsync(ctx, e.p(fmt.Sprint("lost", i)), nil, Persistent, acl, func(_ string, _ Stat, err error) {
				defer wg.Done()
				if !errors.Is(err, ErrConnectionLoss) {
					t.Errorf("call %d: %v, want ConnectionLoss", i, err)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			})
			must(t, "createAsync", err)
		}
		syncErr := make(chan error, 1)
		go func() {
			_, err := c.Set(ctx, e.p("lost0"), nil, -1)
			syncErr <- err
		}()
		p.waitUntil(t, "6 requests at the proxy", 20*time.Second, func() bool { return p.upRead >= 6 })
		p.cut()
		p.setHoldUp(false)
		wg.Wait()
		if err := <-syncErr; !errors.Is(err, ErrConnectionLoss) || !strings.Contains(err.Error(), e.p("lost0")) {
			t.Errorf("sync call: %v, want ConnectionLoss on its path", err)
		}
		if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
			t.Errorf("callbacks ran in order %v", order)
		}
		if ok, _, _ := other.Exists(ctx, e.p("lost0")); ok {
			t.Errorf("a request held at the proxy was applied")
		}

		// A create the server applied but whose reply was lost.
		reconnected := states.wait(t, StateConnected, states.wait(t, StateDisconnected, 0, 20*time.Second), 20*time.Second)
		_, _, created, err := other.ExistsW(ctx, e.p("applied"))
		must(t, "existsW", err)
		p.setHoldDown(true)
		done := make(chan error, 1)
		must(t, "createAsync", c.CreateAsync(ctx, e.p("applied"), nil, Persistent, acl, func(_ string, _ Stat, err error) { done <- err }))
		expectEvent(t, created, EventNodeCreated, e.p("applied"))
		p.cut()
		p.setHoldDown(false)
		if err := <-done; !errors.Is(err, ErrConnectionLoss) {
			t.Fatalf("create with a lost reply: %v, want ConnectionLoss (not retried)", err)
		}
		// The client is usable again, on the same session, once it has
		// reconnected: a call made before it noticed the cut would go into
		// the dead connection and rightly fail with ConnectionLoss too.
		states.wait(t, StateConnected, states.wait(t, StateDisconnected, reconnected+1, 20*time.Second), 20*time.Second)
		if ok, _, err := c.Exists(ctx, e.p("applied")); !ok || err != nil {
			t.Errorf("exists after reconnect = %v, %v", ok, err)
		}
	})
}

// Ref: paper section 4.4: the client "sends a heartbeat after the session
// has been idle for s/3 ms and switch[es] to a new server if it has not
// heard from a server for 2s/3 ms". A server that goes silent (the proxy
// stalls, the TCP connection stays up) is left for the next one within
// the session timeout, and the session moves with the client.
func TestHeartbeatAndFailover(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		const s = 3 * time.Second
		p1, p2 := newProxy(t, e.addr), newProxy(t, e.addr)
		states := newStateLog()
		c := e.connectTo(p1.addr()+","+p2.addr(), WithSessionTimeout(s), states.option())
		if c.SessionTimeout() != s {
			t.Fatalf("negotiated timeout %v, want %v", c.SessionTimeout(), s)
		}
		cur, next := p1, p2
		if p2.active() == 1 {
			cur, next = p2, p1
		}

		// An idle session is kept alive by pings, s/3 apart.
		start := time.Now()
		cur.waitUntil(t, "3 pings", 10*time.Second, func() bool { return cur.pings >= 3 })
		if elapsed := time.Since(start); elapsed < 3*s/3*9/10 {
			t.Errorf("3 pings in %v: more often than every s/3", elapsed)
		}
		if got, _ := states.snapshot(); slices.Contains(got, StateDisconnected) {
			t.Fatalf("idle session disconnected: %v", got)
		}

		id := c.SessionID()
		mark := len(first2(states.snapshot()))
		cur.stall(true)
		cur.mu.Lock()
		heard := cur.lastDown
		cur.mu.Unlock()
		states.wait(t, StateDisconnected, mark, 10*time.Second)
		detected := time.Since(heard)
		states.wait(t, StateConnected, mark, 10*time.Second)
		if detected < 2*s/3*9/10 || detected > s {
			t.Errorf("silence detected %v after the server was last heard, want about 2s/3 = %v", detected, 2*s/3)
		}
		if next.active() != 1 || c.SessionID() != id {
			t.Errorf("after failover: %d connections on the other server, session %x (was %x)", next.active(), c.SessionID(), id)
		}
		if _, _, err := c.Get(ctx(t), "/"); err != nil {
			t.Errorf("get after failover: %v", err)
		}
	})
}

func first2[A, B any](a A, _ B) A { return a }

// Ref: programmer's guide section 3: a session the server has expired is
// dead; the client learns it on reconnecting, reports Expired, and every
// later call fails with SessionExpired.
func TestSessionExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		p := newProxy(t, e.addr)
		states := newStateLog()
		c := e.connectTo(p.addr(), WithSessionTimeout(time.Second), states.option())
		other := e.connect()
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("eph"), nil, Ephemeral, OpenACLUnsafe())
		must(t, "create ephemeral", err)
		_, _, wch, err := c.ExistsW(ctx, e.p("nothing"))
		must(t, "existsW", err)
		pch, err := c.AddWatch(ctx, e.root, WatchPersistentRecursive)
		must(t, "addWatch", err)
		id, pw := c.SessionID(), c.SessionPassword()

		p.setRefuse(true)
		p.cut()
		// The server expires the session and deletes its ephemeral node.
		ok, _, gone, err := other.ExistsW(ctx, e.p("eph"))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			expectEvent(t, gone, EventNodeDeleted, e.p("eph"))
		}
		// A call made while disconnected waits for the next connection.
		queued := make(chan error, 1)
		must(t, "queue a call", c.GetAsync(ctx, "/", func(_ []byte, _ Stat, err error) { queued <- err }))
		p.setRefuse(false)

		states.wait(t, StateExpired, 0, 20*time.Second)
		<-c.Done()
		if !errors.Is(c.Err(), ErrSessionExpired) || c.State() != StateExpired {
			t.Errorf("Err %v, State %v", c.Err(), c.State())
		}
		if err := <-queued; !errors.Is(err, ErrSessionExpired) {
			t.Errorf("queued call: %v, want SessionExpired", err)
		}
		if _, _, err := c.Get(ctx, "/"); !errors.Is(err, ErrSessionExpired) {
			t.Errorf("call after expiry: %v", err)
		}
		if err := c.GetAsync(ctx, "/", func([]byte, Stat, error) { t.Error("callback of a refused call") }); !errors.Is(err, ErrSessionExpired) {
			t.Errorf("async call after expiry: %v", err)
		}
		for _, ch := range []<-chan Event{wch, pch} {
			var last Event
			for ev := range ch {
				last = ev
			}
			if last.Type != EventNotWatching || !errors.Is(last.Err, ErrSessionExpired) {
				t.Errorf("watch ended with %+v", last)
			}
		}
		got, _ := states.snapshot()
		if got[len(got)-1] != StateExpired {
			t.Errorf("states %v end in %v", got, got[len(got)-1])
		}

		// Reattaching to the dead session fails the same way.
		_, err = Connect(ctx, e.addr, WithSession(id, pw), WithLogger(testLogger(t)))
		if !errors.Is(err, ErrSessionExpired) {
			t.Errorf("connect to an expired session: %v", err)
		}
	})
}

// Ref: the Java client's session recovery across instances: a process may
// reattach to its session with the id and password.
func TestReattachSession(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		_, _, err := c.Create(ctx(t), e.p("eph"), nil, Ephemeral, OpenACLUnsafe())
		must(t, "create", err)
		d := e.connect(WithSession(c.SessionID(), c.SessionPassword()))
		if d.SessionID() != c.SessionID() {
			t.Fatalf("reattached to %x, want %x", d.SessionID(), c.SessionID())
		}
		eph, err := d.GetEphemerals(ctx(t), "/")
		if err != nil || !slices.Contains(eph, e.p("eph")) {
			t.Errorf("the reattached session does not own the ephemeral: %v %v", eph, err)
		}
		if _, err := Connect(ctx(t), e.addr, WithSession(c.SessionID(), []byte("wrong password 16")), WithLogger(testLogger(t))); !errors.Is(err, ErrSessionExpired) {
			t.Errorf("wrong password: %v, want SessionExpired", err)
		}
	})
}

// Close sends the calls made before it, ends the session on the server,
// ends every watch with ErrClosed and refuses later calls.
func TestClose(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		states := newStateLog()
		c := e.connect(states.option())
		other := e.connect()
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("eph"), nil, Ephemeral, OpenACLUnsafe())
		must(t, "create", err)
		_, _, wch, err := c.ExistsW(ctx, e.p("nothing"))
		must(t, "existsW", err)
		pch, err := c.AddWatch(ctx, e.p("quiet"), WatchPersistent)
		must(t, "addWatch", err)

		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			err := c.SetAsync(ctx, e.p("eph"), []byte(fmt.Sprint(i)), -1, func(_ Stat, err error) {
				defer wg.Done()
				if err != nil {
					t.Errorf("a call made before Close failed: %v", err)
				}
			})
			must(t, "setAsync", err)
		}
		must(t, "close", c.Close())
		wg.Wait()
		must(t, "second close", c.Close())

		if ok, _, _ := other.Exists(ctx, e.p("eph")); ok {
			t.Errorf("ephemeral node outlived Close")
		}
		for _, ch := range []<-chan Event{wch, pch} {
			var last Event
			for ev := range ch {
				last = ev
			}
			if last.Type != EventNotWatching || !errors.Is(last.Err, ErrClosed) {
				t.Errorf("watch ended with %+v", last)
			}
		}
		if _, _, err := c.Get(ctx, "/"); !errors.Is(err, ErrClosed) {
			t.Errorf("call after Close: %v", err)
		}
		if err := c.SyncAsync(ctx, "/", func(error) { t.Error("callback of a refused call") }); !errors.Is(err, ErrClosed) {
			t.Errorf("async call after Close: %v", err)
		}
		<-c.Done()
		if !errors.Is(c.Err(), ErrClosed) || c.State() != StateClosed {
			t.Errorf("Err %v State %v", c.Err(), c.State())
		}
		states.wait(t, StateClosed, 0, 10*time.Second)
		<-c.disp.done // the callback goroutine exits after the last state change
	})
}

// Close may be called from a callback, and while no server is reachable.
func TestCloseFromCallbackAndWhileDisconnected(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		closed := make(chan error, 1)
		must(t, "getAsync", c.GetAsync(ctx(t), "/", func([]byte, Stat, error) { closed <- c.Close() }))
		if err := <-closed; err != nil {
			t.Errorf("close from a callback: %v", err)
		}
		<-c.disp.done

		p := newProxy(t, e.addr)
		d := e.connectTo(p.addr())
		p.setRefuse(true)
		p.cut()
		pending := make(chan error, 1)
		must(t, "getAsync", d.GetAsync(ctx(t), "/", func(_ []byte, _ Stat, err error) { pending <- err }))
		must(t, "close", d.Close())
		if err := <-pending; !errors.Is(err, ErrClosed) && !errors.Is(err, ErrConnectionLoss) {
			t.Errorf("call pending at Close: %v", err)
		}
	})
}

// A synchronous call whose context ends while it waits for a connection
// is never sent: a write the caller gave up on does not apply later.
func TestAbandonedCallIsNotSent(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		p := newProxy(t, e.addr)
		states := newStateLog()
		c := e.connectTo(p.addr(), states.option())
		p.setRefuse(true)
		p.cut()
		mark := states.wait(t, StateDisconnected, 0, 20*time.Second)
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, _, err := c.Create(short, e.p("late"), nil, Persistent, OpenACLUnsafe()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("create while disconnected: %v", err)
		}
		p.setRefuse(false)
		states.wait(t, StateConnected, mark, 30*time.Second)
		if ok, _, err := c.Exists(ctx(t), e.p("late")); ok || err != nil {
			t.Errorf("the abandoned create was applied: %v %v", ok, err)
		}
	})
}

func TestConnectErrors(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		if _, err := Connect(ctx(t), "host:1/bad/", WithLogger(testLogger(t))); !errors.Is(err, ErrInvalidConnectString) {
			t.Errorf("bad connect string: %v", err)
		}
		p := newProxy(t, e.addr)
		p.setRefuse(true)
		cctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := Connect(cctx, p.addr(), WithLogger(testLogger(t)), WithSessionTimeout(2*time.Second))
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last error") {
			t.Errorf("connect to a refusing server: %v", err)
		}
	})
}

// WithMaxInFlight bounds the calls on the wire: a call beyond it waits for
// room, and its context bounds the wait.
func TestMaxInFlight(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		p := newProxy(t, e.addr)
		c := e.connectTo(p.addr(), WithMaxInFlight(2))
		p.setHoldDown(true)
		done := make(chan error, 2)
		for range 2 {
			must(t, "syncAsync", c.SyncAsync(ctx(t), "/", func(err error) { done <- err }))
		}
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := c.SyncAsync(short, "/", func(error) { t.Error("callback of a refused call") }); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("third call: %v, want DeadlineExceeded", err)
		}
		if _, _, err := c.Get(short, "/"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("sync call over the limit: %v", err)
		}
		p.setHoldDown(false)
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("held call: %v", err)
			}
		}
		if _, _, err := c.Get(ctx(t), "/"); err != nil {
			t.Errorf("get after the backlog cleared: %v", err)
		}
	})
}

// Ref: the Java client's canBeReadOnly: a server cut off from its quorum
// serves reads to the clients that allow read-only mode, refuses their
// writes, and turns the other clients away.
func TestReadOnly(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			if tg.startReadOnly == nil {
				t.Skip("the target has no read-only server")
			}
			addr := sharedServer(t, tg.name+"/read-only", tg.startReadOnly)
			states := newStateLog()
			c, err := Connect(ctx(t), addr, WithReadOnly(true), states.option(), WithLogger(testLogger(t)))
			must(t, "connect allowing read-only", err)
			defer c.Close()
			if c.State() != StateConnectedReadOnly {
				t.Errorf("state %v", c.State())
			}
			states.wait(t, StateConnectedReadOnly, 0, 10*time.Second)
			if _, _, err := c.Get(ctx(t), "/zookeeper"); err != nil {
				t.Errorf("read: %v", err)
			}
			if _, _, err := c.Create(ctx(t), "/x", nil, Persistent, OpenACLUnsafe()); !errors.Is(err, ErrNotReadOnly) {
				t.Errorf("write: %v, want NotReadOnly", err)
			}
			short, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := Connect(short, addr, WithLogger(testLogger(t))); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("connect without read-only mode: %v", err)
			}
		})
	}
}
