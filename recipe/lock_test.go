package recipe

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zoohq/zoo/zk"
)

// Ref: recipes guide, "Locks": at most one holder at a time. The counter
// update is a read, a yield and a write: it tears if two hold the lock.
func TestMutexExclusion(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const workers, rounds = 8, 5
		var inside atomic.Int32
		counter := 0
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			c := newClient(t)
			wg.Go(func() {
				m := NewMutex(c, dir, nil)
				for range rounds {
					if err := m.Lock(ctx); err != nil {
						errs <- err
						return
					}
					if n := inside.Add(1); n != 1 {
						errs <- errors.New("two holders at once")
					}
					v := counter
					runtime.Gosched()
					counter = v + 1
					inside.Add(-1)
					if err := m.Unlock(ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if counter != workers*rounds {
			t.Fatalf("counter = %d, want %d", counter, workers*rounds)
		}
	})
}

// Ref: recipes guide, "Locks": each waiter watches only its predecessor,
// so the lock goes in order of arrival and each release wakes exactly one
// waiter (no herd effect).
func TestMutexFIFOWithoutHerd(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const waiters = 8
		waiting := make(chan string, waiters)
		var woken atomic.Int32
		setHooks(t, dir, hooks{
			waiting: func(self, _ string) { waiting <- self },
			woken:   func(string) { woken.Add(1) },
		})
		holder := NewMutex(newClient(t), dir, nil)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			order []int
			wg    sync.WaitGroup
		)
		for i := range waiters {
			m := NewMutex(newClient(t), dir, nil)
			wg.Go(func() {
				if err := m.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				if err := m.Unlock(ctx); err != nil {
					t.Error(err)
				}
			})
			waitCh(t, ctx, waiting, "waiter to queue") // queue them in a known order
		}
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for i, got := range order {
			if got != i {
				t.Fatalf("acquisition order %v, want FIFO", order)
			}
		}
		if n := woken.Load(); n != waiters {
			t.Fatalf("%d watch events reached waiters for %d releases, want exactly one per release", n, waiters)
		}
	})
}

// A holder whose session ends loses the lock visibly (Done closes, Err
// is ErrLost) and the next waiter proceeds.
func TestMutexHolderSessionEnds(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 1)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		hc := newClient(t)
		holder := NewMutex(hc, dir, nil)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		next := NewMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- next.Lock(ctx) }()
		waitCh(t, ctx, waiting, "waiter to queue")
		_ = hc.Close()
		waitCh(t, ctx, holder.Done(), "holder's Done")
		if err := holder.Err(); !errors.Is(err, ErrLost) {
			t.Fatalf("holder.Err() = %v, want ErrLost", err)
		}
		if err := waitCh(t, ctx, got, "next Lock"); err != nil {
			t.Fatalf("next Lock: %v", err)
		}
		if err := holder.Unlock(ctx); !errors.Is(err, ErrLost) {
			t.Fatalf("Unlock after loss = %v, want ErrLost", err)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A waiter whose context ends leaves the line; the one behind it then
// waits for the holder and gets the lock when it is released.
func TestMutexCancelledWaiter(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 2)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		holder := NewMutex(newClient(t), dir, nil)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		quitter := NewMutex(newClient(t), dir, nil)
		quit := make(chan error, 1)
		go func() { quit <- quitter.Lock(cctx) }()
		waitCh(t, ctx, waiting, "quitter to queue")
		last := NewMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- last.Lock(ctx) }()
		waitCh(t, ctx, waiting, "last to queue")
		cancel()
		if err := waitCh(t, ctx, quit, "quitter"); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Lock = %v, want context.Canceled", err)
		}
		select {
		case err := <-got:
			t.Fatalf("last got the lock while it was held: %v", err)
		default:
		}
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, got, "last Lock"); err != nil {
			t.Fatal(err)
		}
		kids, _, err := newClient(t).Children(ctx, dir)
		if err != nil || len(kids) != 1 {
			t.Fatalf("children %v, %v: want only the holder's node", kids, err)
		}
	})
}

// Ref: recipes guide, "Recoverable Errors and the GUID": a create whose
// reply is lost is found again by its GUID; no orphan node is left to
// block the line.
func TestMutexCreateReplyLost(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		var lost atomic.Int32
		setHooks(t, dir, hooks{created: func(string) error {
			if lost.Add(1) == 1 {
				return zk.ErrConnectionLoss
			}
			return nil
		}})
		c := newClient(t)
		m := NewMutex(c, dir, nil)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		kids, _, err := c.Children(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 1 || dir+"/"+kids[0] != m.Node() {
			t.Fatalf("children %v, held node %q: want exactly the one node", kids, m.Node())
		}
		if lost.Load() != 1 {
			t.Fatalf("create ran %d times, want 1", lost.Load())
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Locks are not reentrant; Unlock without Lock is an error.
func TestMutexNotReentrant(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		m := NewMutex(newClient(t), dir, nil)
		if err := m.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Unlock of a free Mutex = %v, want ErrNotHeld", err)
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Lock(ctx); !errors.Is(err, ErrHeld) {
			t.Fatalf("second Lock = %v, want ErrHeld", err)
		}
		select {
		case <-m.Done():
			t.Fatal("Done closed while held")
		default:
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		waitCh(t, ctx, m.Done(), "Done after Unlock")
	})
}
