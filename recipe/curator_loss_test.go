package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// cutClient connects through a cutter with the given session timeout.
func cutClient(t *testing.T, ctx context.Context, timeout time.Duration) (*zk.Client, *cutter) {
	t.Helper()
	d := &cutter{}
	c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(timeout), zk.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, d
}

// expire cuts c off until the server has expired its session (an
// ephemeral node of c's at mark is gone); the caller then restores the
// link so that c learns of it.
func expire(t *testing.T, ctx context.Context, c *zk.Client, d *cutter, mark string) {
	t.Helper()
	if _, _, err := c.Create(ctx, mark, nil, zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	d.cut(true)
	w := newClient(t)
	if !pollFor(ctx, func() bool { ok, _, err := w.Exists(ctx, mark); return err == nil && !ok }) {
		t.Fatal("session did not expire")
	}
}

// awaitDisconnected waits until c has noticed the cut.
func awaitDisconnected(t *testing.T, ctx context.Context, c *zk.Client) {
	t.Helper()
	if !pollFor(ctx, func() bool { return c.State() != zk.StateConnected }) {
		t.Fatal("still connected")
	}
}

// A lock survives a connection loss that the session survives: the
// waiter keeps waiting, and the holder releases normally.
func TestInterProcessMutexSurvivesConnectionLoss(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		c, d := cutClient(t, ctx, 10*time.Second)
		holder := NewInterProcessMutex(c, dir, nil)
		if err := holder.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		next := NewInterProcessMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- next.Acquire(ctx) }()
		waitParticipants(t, ctx, holder, 2)
		d.cut(true)
		awaitDisconnected(t, ctx, c)
		d.cut(false)
		if !pollFor(ctx, func() bool { return c.State() == zk.StateConnected }) {
			t.Fatal("not back")
		}
		select {
		case err := <-got:
			t.Fatalf("waiter got the lock while the holder's session lives (err %v)", err)
		default:
		}
		if !holder.IsAcquired() {
			t.Fatalf("holder lost the lock: %v", holder.Err())
		}
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, got, "waiter's Acquire"); err != nil {
			t.Fatal(err)
		}
		_ = next.Release(ctx)
	})
}

// A SharedCount changed while its connection was down hears the new
// value when the connection is back; when its session expires it stops
// with ErrLost.
func TestSharedCountConnectionLossAndExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/count"
		c, d := cutClient(t, ctx, 2*time.Second)
		s := NewSharedCount(c, p, 1, nil)
		heard := make(chan int32, 10)
		s.AddListener(func(v int32) { heard <- v })
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		w := NewSharedCount(newClient(t), p, 0, nil)
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		d.cut(true)
		awaitDisconnected(t, ctx, c)
		if err := w.SetCount(ctx, 5); err != nil {
			t.Fatal(err)
		}
		d.cut(false)
		if got := waitCh(t, ctx, heard, "value after reconnect"); got != 5 {
			t.Fatalf("heard %d", got)
		}
		expire(t, ctx, c, d, p+"-mark")
		d.cut(false)
		waitCh(t, ctx, s.done, "SharedCount's end")
		if err := s.Close(); !errors.Is(err, ErrLost) {
			t.Fatalf("Close after expiry = %v, want ErrLost", err)
		}
	})
}

// A PersistentNode deleted while its connection was down is made again
// when the connection is back; after session expiry it ends with ErrLost.
func TestPersistentNodeConnectionLossAndExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/node"
		c, d := cutClient(t, ctx, 2*time.Second)
		n := NewPersistentNode(c, p, zk.Persistent, false, []byte("x"), nil)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close(ctx) })
		if err := n.WaitForInitialCreate(ctx); err != nil {
			t.Fatal(err)
		}
		w := newClient(t)
		d.cut(true)
		awaitDisconnected(t, ctx, c)
		if err := w.Delete(ctx, p, -1); err != nil {
			t.Fatal(err)
		}
		d.cut(false)
		if !pollFor(ctx, func() bool { ok, _, err := w.Exists(ctx, p); return err == nil && ok }) {
			t.Fatal("not made again after reconnect")
		}
		expire(t, ctx, c, d, p+"-mark")
		d.cut(false)
		waitCh(t, ctx, n.Done(), "PersistentNode's end")
		if !errors.Is(n.Err(), ErrLost) {
			t.Fatalf("Err = %v, want ErrLost", n.Err())
		}
	})
}

// A leader whose session expires stops leading, and the other
// participant leads.
func TestLeaderSelectorSessionExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		c, d := cutClient(t, ctx, time.Second)
		aLeads, bLeads := make(chan struct{}, 1), make(chan struct{}, 1)
		lead := func(ch chan struct{}) LeadershipFunc {
			return func(ctx context.Context, _ FencingToken) error {
				ch <- struct{}{}
				<-ctx.Done()
				return nil
			}
		}
		a := NewLeaderSelector(c, dir, "a", lead(aLeads), nil)
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		waitCh(t, ctx, aLeads, "a leads")
		b := NewLeaderSelector(newClient(t), dir, "b", lead(bLeads), nil)
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		d.cut(true)
		waitCh(t, ctx, bLeads, "b leads after a's session expired")
		if a.HasLeadership() {
			t.Fatal("a still thinks it leads")
		}
		d.cut(false)
		waitCh(t, ctx, a.Done(), "a's end")
		if err := a.Close(); !errors.Is(err, ErrLost) {
			t.Fatalf("a.Close = %v, want ErrLost", err)
		}
	})
}

// A Take waiting across a connection loss gets the item put meanwhile.
func TestDistributedDelayQueueConnectionLoss(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		c, d := cutClient(t, ctx, 10*time.Second)
		q := NewDistributedDelayQueue(c, dir, nil)
		got := make(chan []byte, 1)
		errc := make(chan error, 1)
		go func() {
			it, err := q.Take(ctx)
			if err != nil {
				errc <- err
				return
			}
			got <- it
		}()
		p := NewDistributedDelayQueue(newClient(t), dir, nil)
		if !pollFor(ctx, func() bool { ok, _, err := c.Exists(ctx, dir); return err == nil && ok }) {
			t.Fatal("queue never made")
		}
		d.cut(true)
		awaitDisconnected(t, ctx, c)
		if err := p.Put(ctx, []byte("x"), time.Time{}); err != nil {
			t.Fatal(err)
		}
		d.cut(false)
		select {
		case it := <-got:
			if string(it) != "x" {
				t.Fatalf("took %q", it)
			}
		case err := <-errc:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("Take did not get the item put while it was disconnected")
		}
	})
}
