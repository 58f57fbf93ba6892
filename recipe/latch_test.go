package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// recorder is a LeaderLatchListener that keeps what it was told.
type recorder struct {
	mu      sync.Mutex
	events  []bool
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 100)} }

func (r *recorder) IsLeader()  { r.add(true) }
func (r *recorder) NotLeader() { r.add(false) }
func (r *recorder) add(v bool) {
	r.mu.Lock()
	r.events = append(r.events, v)
	r.mu.Unlock()
	r.changed <- struct{}{}
}

func (r *recorder) get() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.events...)
}

// waitFor waits until the recorded events are want.
func (r *recorder) waitFor(t *testing.T, ctx context.Context, want ...bool) {
	t.Helper()
	for {
		if got := r.get(); fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			t.Fatalf("listener events %v, want %v", r.get(), want)
		}
	}
}

func startLatch(t *testing.T, c *zk.Client, dir, id string) (*LeaderLatch, *recorder) {
	t.Helper()
	l := NewLeaderLatch(c, dir, id, nil)
	r := newRecorder()
	l.AddListener(r)
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, r
}

func TestLeaderLatchOneLeaderAndSuccession(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/latch"
		a, ra := startLatch(t, newClient(t), dir, "a")
		if err := a.Await(ctx); err != nil {
			t.Fatal(err)
		}
		obs := a.Observe()
		b, rb := startLatch(t, newClient(t), dir, "b")
		if !pollFor(ctx, func() bool { ps, err := b.Participants(ctx); return err == nil && len(ps) == 2 }) {
			t.Fatal("b never joined")
		}
		ps, _ := b.Participants(ctx)
		if ps[0] != (Participant{ID: "a", Leader: true}) || ps[1].ID != "b" || b.HasLeadership() {
			t.Fatalf("participants %v, b leads %v", ps, b.HasLeadership())
		}
		tokA := a.Token()
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if v := waitCh(t, ctx, obs, "observed loss"); v {
			t.Fatal("observer saw leadership on close")
		}
		if err := b.Await(ctx); err != nil {
			t.Fatal(err)
		}
		if b.Token() <= tokA {
			t.Fatalf("b's token %d not above a's %d", b.Token(), tokA)
		}
		ra.waitFor(t, ctx, true, false)
		rb.waitFor(t, ctx, true)
		if l, err := b.Leader(ctx); err != nil || l.ID != "b" {
			t.Fatalf("Leader = %v, %v", l, err)
		}
	})
}

// On connection loss the leader gives up leadership (its session might
// expire unseen) and takes it back when the session is back.
func TestLeaderLatchConnectionLoss(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		d := &cutter{}
		c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(4*time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		l, r := startLatch(t, c, dir, "a")
		if err := l.Await(ctx); err != nil {
			t.Fatal(err)
		}
		d.cut(false) // drop the connection; the client reconnects at once
		r.waitFor(t, ctx, true, false, true)
		if !l.HasLeadership() {
			t.Fatal("not leading after the session came back")
		}
	})
}

// The leader's session expires: the other participant leads, and the
// old latch ends with ErrLost after telling its listener.
func TestLeaderLatchSessionExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		d := &cutter{}
		c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		a, ra := startLatch(t, c, dir, "a")
		if err := a.Await(ctx); err != nil {
			t.Fatal(err)
		}
		b, _ := startLatch(t, newClient(t), dir, "b")
		d.cut(true)
		if err := b.Await(ctx); err != nil {
			t.Fatal(err)
		}
		d.cut(false)
		waitCh(t, ctx, a.Done(), "a's end")
		if !errors.Is(a.Err(), ErrLost) {
			t.Fatalf("a.Err() = %v, want ErrLost", a.Err())
		}
		ra.waitFor(t, ctx, true, false)
	})
}
