package recipe

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Ref: recipes guide, "Shared Locks": readers share, a writer excludes
// readers and writers.
func TestRWMutexExclusion(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const workers, rounds = 6, 4
		var readers, writers, maxReaders atomic.Int32
		var wg sync.WaitGroup
		for i := range workers {
			m := NewRWMutex(newClient(t), dir, nil)
			wg.Go(func() {
				for r := range rounds {
					if (i+r)%3 == 0 {
						if err := m.Lock(ctx); err != nil {
							t.Error(err)
							return
						}
						if writers.Add(1) != 1 || readers.Load() != 0 {
							t.Error("writer not alone")
						}
						writers.Add(-1)
						if err := m.Unlock(ctx); err != nil {
							t.Error(err)
							return
						}
						continue
					}
					if err := m.RLock(ctx); err != nil {
						t.Error(err)
						return
					}
					n := readers.Add(1)
					if writers.Load() != 0 {
						t.Error("reader with a writer")
					}
					for old := maxReaders.Load(); n > old && !maxReaders.CompareAndSwap(old, n); old = maxReaders.Load() {
					}
					readers.Add(-1)
					if err := m.RUnlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// Readers share the lock while no writer is ahead; a writer waits for
// them, and a reader behind a waiting writer waits too.
func TestRWMutexOrder(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 4)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		r1, r2 := NewRWMutex(newClient(t), dir, nil), NewRWMutex(newClient(t), dir, nil)
		for _, r := range []*RWMutex{r1, r2} {
			if err := r.RLock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		w := NewRWMutex(newClient(t), dir, nil)
		wgot := make(chan error, 1)
		go func() { wgot <- w.Lock(ctx) }()
		waitCh(t, ctx, waiting, "writer to queue")
		r3 := NewRWMutex(newClient(t), dir, nil)
		rgot := make(chan error, 1)
		go func() { rgot <- r3.RLock(ctx) }()
		waitCh(t, ctx, waiting, "late reader to queue")
		if err := r1.RLock(ctx); !errors.Is(err, ErrHeld) {
			t.Fatalf("second RLock = %v, want ErrHeld", err)
		}
		for _, r := range []*RWMutex{r2, r1} {
			select {
			case <-wgot:
				t.Fatal("writer got the lock while readers held it")
			default:
			}
			if err := r.RUnlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := waitCh(t, ctx, wgot, "writer"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-rgot:
			t.Fatal("reader got the lock while a writer held it")
		default:
		}
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, rgot, "late reader"); err != nil {
			t.Fatal(err)
		}
	})
}
