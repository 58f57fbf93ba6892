package recipe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// Ref: recipes guide, "Queues": items come out in the order they went in.
func TestQueueOrder(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		q := NewQueue(newClient(t), dir, nil)
		for i := range 20 {
			if err := q.Put(ctx, []byte(strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			v, err := q.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(v) != strconv.Itoa(i) {
				t.Fatalf("item %d = %q", i, v)
			}
		}
	})
}

// Concurrent producers and consumers: nothing is lost or duplicated, and
// Take blocks on an empty queue until a Put.
func TestQueueConcurrent(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const producers, consumers, items = 3, 4, 30
		cctx, stop := context.WithCancel(ctx)
		var (
			mu  sync.Mutex
			got = map[string]int{}
			all = make(chan struct{})
			cwg sync.WaitGroup
		)
		for range consumers {
			q := NewQueue(newClient(t), dir, nil)
			cwg.Go(func() {
				for {
					v, err := q.Take(cctx)
					if errors.Is(err, context.Canceled) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					got[string(v)]++
					if len(got) == producers*items {
						close(all)
					}
					mu.Unlock()
				}
			})
		}
		var pwg sync.WaitGroup
		for p := range producers {
			q := NewQueue(newClient(t), dir, nil)
			pwg.Go(func() {
				for i := range items {
					if err := q.Put(ctx, fmt.Appendf(nil, "%d-%d", p, i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		pwg.Wait()
		waitCh(t, ctx, all, "every item taken")
		stop()
		cwg.Wait()
		for k, n := range got {
			if n != 1 {
				t.Errorf("item %s taken %d times", k, n)
			}
		}
	})
}

// A Put whose reply is lost is not duplicated.
func TestQueuePutReplyLost(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		var once sync.Once
		setHooks(t, dir, hooks{created: func(string) (err error) {
			once.Do(func() { err = errLostReply })
			return err
		}})
		q := NewQueue(newClient(t), dir, nil)
		if err := q.Put(ctx, []byte("a")); err != nil {
			t.Fatal(err)
		}
		kids, _, err := newClient(t).Children(ctx, dir)
		if err != nil || len(kids) != 1 {
			t.Fatalf("children %v, %v: want one item", kids, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := q.Take(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Take(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Take on an empty queue with a cancelled context = %v", err)
		}
	})
}
