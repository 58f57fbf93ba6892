package recipe

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Three participants with AutoRequeue: each leads in turn, never two at
// once, and each leads again after the others (requeue).
func TestLeaderSelectorRequeue(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		var (
			inside atomic.Int32
			mu     sync.Mutex
			turns  = map[string]int{}
			last   FencingToken
			bad    = make(chan string, 10)
			enough = make(chan struct{})
			once   sync.Once
		)
		for _, id := range []string{"a", "b", "c"} {
			s := NewLeaderSelector(newClient(t), dir, id, func(ctx context.Context, tok FencingToken) error {
				if inside.Add(1) != 1 {
					bad <- "two leaders at once"
				}
				defer inside.Add(-1)
				mu.Lock()
				if tok <= last {
					bad <- "fencing token did not grow"
				}
				last = tok
				turns[id]++
				done := turns["a"] >= 2 && turns["b"] >= 2 && turns["c"] >= 2
				mu.Unlock()
				if done {
					once.Do(func() { close(enough) })
				}
				return nil
			}, nil)
			s.AutoRequeue()
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
		}
		select {
		case <-enough:
		case msg := <-bad:
			t.Fatal(msg)
		case <-ctx.Done():
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("turns %v", turns)
		}
	})
}

// Without AutoRequeue a participant leads once; Requeue queues it again.
// A leader whose connection drops sees its ctx cancelled.
func TestLeaderSelectorCancelOnConnectionLoss(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		d := &cutter{}
		c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(4*time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		leading := make(chan struct{}, 2)
		ended := make(chan error, 2)
		s := NewLeaderSelector(c, dir, "a", func(ctx context.Context, _ FencingToken) error {
			leading <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			return nil
		}, nil)
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		waitCh(t, ctx, leading, "leadership")
		if ps, err := s.Participants(ctx); err != nil || len(ps) != 1 || ps[0].ID != "a" {
			t.Fatalf("Participants = %v, %v", ps, err)
		}
		d.cut(false)
		if err := waitCh(t, ctx, ended, "leadership cancelled"); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if !pollFor(ctx, func() bool { return !s.HasLeadership() && s.Requeue() }) {
			t.Fatal("could not requeue")
		}
		waitCh(t, ctx, leading, "leadership after Requeue")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
