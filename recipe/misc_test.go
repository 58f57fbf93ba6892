package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Ref: recipes guide, "Group Membership": members appear and vanish with
// their sessions; the watcher always ends on the latest list.
func TestGroup(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		obs := NewGroup(newClient(t), dir, nil)
		lists, err := obs.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		await := func(want ...string) {
			t.Helper()
			for {
				got := waitCh(t, ctx, lists, fmt.Sprintf("members %v", want))
				if slices.Equal(got, want) || (len(got) == 0 && len(want) == 0) {
					return
				}
			}
		}
		await()
		ca, cb := newClient(t), newClient(t)
		a, err := NewGroup(ca, dir, nil).Join(ctx, "a", []byte("1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewGroup(cb, dir, nil).Join(ctx, "b", nil); err != nil {
			t.Fatal(err)
		}
		await("a", "b")
		if _, err := NewGroup(cb, dir, nil).Join(ctx, "a", nil); !errors.Is(err, zkErrNodeExists) {
			t.Fatalf("joining with a taken name = %v, want ErrNodeExists", err)
		}
		_ = cb.Close() // b's session ends: b leaves
		await("a")
		if err := a.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		await()
		waitCh(t, ctx, a.Done(), "a's Done")
		if m, err := obs.Members(ctx); err != nil || len(m) != 0 {
			t.Fatalf("Members = %v, %v", m, err)
		}
	})
}

// A member whose session ends sees its membership lost.
func TestGroupMemberLost(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		c := newClient(t)
		m, err := NewGroup(c, dir, nil).Join(ctx, "x", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		waitCh(t, ctx, m.Done(), "Done")
		if !errors.Is(m.Err(), ErrLost) {
			t.Fatalf("Err = %v, want ErrLost", m.Err())
		}
	})
}

// Ref: paper section 2.4: read-modify-write with a conditional setData;
// concurrent increments from many sessions are all counted.
func TestCounter(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const workers, adds = 6, 10
		var wg sync.WaitGroup
		for range workers {
			k := NewCounter(newClient(t), dir+"/n", nil)
			wg.Go(func() {
				for range adds {
					if _, err := k.Add(ctx, 1); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		n, err := NewCounter(newClient(t), dir+"/n", nil).Get(ctx)
		if err != nil || n != workers*adds {
			t.Fatalf("counter = %d, %v; want %d", n, err, workers*adds)
		}
	})
}

// At most n holders at once, and every contender gets in.
func TestSemaphore(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const places, workers, rounds = 3, 8, 3
		var in, peak atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			s := NewSemaphore(newClient(t), dir, places, nil)
			wg.Go(func() {
				for range rounds {
					if err := s.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					n := in.Add(1)
					if n > places {
						t.Errorf("%d holders, limit %d", n, places)
					}
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					in.Add(-1)
					if err := s.Release(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// A semaphore waiter gets in when any holder leaves, not only the first.
func TestSemaphoreOutOfOrderRelease(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 4)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		a, b := NewSemaphore(newClient(t), dir, 2, nil), NewSemaphore(newClient(t), dir, 2, nil)
		for _, s := range []*Semaphore{a, b} {
			if err := s.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
		}
		c := NewSemaphore(newClient(t), dir, 2, nil)
		got := make(chan error, 1)
		go func() { got <- c.Acquire(ctx) }()
		waitCh(t, ctx, waiting, "waiter")
		if err := b.Release(ctx); err != nil { // the second holder leaves first
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, got, "waiter admitted"); err != nil {
			t.Fatal(err)
		}
	})
}

// Ref: paper section 2.3, the "ready" znode: a watcher never exposes a
// configuration mixed from two publications, and ends on the latest.
func TestConfigWatcher(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		wc := newClient(t)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		got := make(chan *ConfigWatcher, 1)
		go func() {
			w, err := WatchConfig(wctx, wc, dir)
			if err != nil {
				t.Error(err)
			}
			got <- w
		}()
		pc := newClient(t)
		const versions = 20
		cfgOf := func(v int) map[string][]byte {
			return map[string][]byte{"a": fmt.Appendf(nil, "%d", v), "b": fmt.Appendf(nil, "%d", v)}
		}
		if err := PublishConfig(ctx, pc, dir, cfgOf(0), nil); err != nil {
			t.Fatal(err)
		}
		w := waitCh(t, ctx, got, "first configuration")
		if w == nil {
			t.FailNow()
		}
		defer w.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for v := 1; v < versions; v++ {
				if err := PublishConfig(ctx, pc, dir, cfgOf(v), nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		for {
			changed := w.Changed()
			cfg, _ := w.Get()
			if string(cfg["a"]) != string(cfg["b"]) || len(cfg) != 2 {
				t.Fatalf("torn configuration %q", cfg)
			}
			if string(cfg["a"]) == fmt.Sprint(versions-1) {
				break
			}
			waitCh(t, ctx, changed, "next configuration")
		}
		<-done
	})
}

// Ref: recipes guide, "Barriers": waiters pass once the node is gone.
func TestBarrier(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 3)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		b := NewBarrier(newClient(t), dir+"/b", nil)
		if err := b.Set(ctx); err != nil {
			t.Fatal(err)
		}
		var passed atomic.Int32
		var wg sync.WaitGroup
		for range 3 {
			w := NewBarrier(newClient(t), dir+"/b", nil)
			wg.Go(func() {
				if err := w.Wait(ctx); err != nil {
					t.Error(err)
				}
				passed.Add(1)
			})
		}
		for range 3 {
			waitCh(t, ctx, waiting, "waiters")
		}
		if passed.Load() != 0 {
			t.Fatal("a waiter passed a barrier in place")
		}
		if err := b.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	})
}
