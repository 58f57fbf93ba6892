package recipe

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

func TestSemaphoreV2Leases(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const max, workers = 2, 5
		var (
			out  atomic.Int32
			peak atomic.Int32
			wg   sync.WaitGroup
		)
		errs := make(chan error, workers)
		for range workers {
			s := NewInterProcessSemaphoreV2(newClient(t), dir, max, nil)
			wg.Go(func() {
				for range 3 {
					l, err := s.Acquire(ctx)
					if err != nil {
						errs <- err
						return
					}
					n := out.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					if n > max {
						errs <- errors.New("more leases than allowed")
					}
					out.Add(-1)
					if err := l.Close(ctx); err != nil {
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
		if peak.Load() < 1 {
			t.Fatal("no lease was ever out")
		}
	})
}

// A holder's session expires: its lease goes with it and a waiter gets
// one.
func TestSemaphoreV2HolderSessionExpires(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		d := &cutter{}
		hc, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = hc.Close() })
		if _, err := NewInterProcessSemaphoreV2(hc, dir, 1, nil).Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		s := NewInterProcessSemaphoreV2(newClient(t), dir, 1, nil)
		got := make(chan error, 1)
		go func() {
			l, err := s.Acquire(ctx)
			if err == nil {
				err = l.Close(ctx)
			}
			got <- err
		}()
		if !pollFor(ctx, func() bool { ps, err := s.ParticipantNodes(ctx); return err == nil && len(ps) == 2 }) {
			t.Fatal("waiter never queued")
		}
		d.cut(true)
		if err := waitCh(t, ctx, got, "lease after the holder's session expired"); err != nil {
			t.Fatal(err)
		}
	})
}
