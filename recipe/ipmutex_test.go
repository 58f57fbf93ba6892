package recipe

import (
	"context"
	"errors"
	"path"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

var curatorLockNode = regexp.MustCompile(`^_c_[0-9a-f-]{36}-lock-\d{10}$`)

func TestInterProcessMutexReentrantWithCuratorNames(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/a/lock"
		m := NewInterProcessMutex(newClient(t), dir, nil)
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		node := m.Node()
		if !curatorLockNode.MatchString(path.Base(node)) {
			t.Fatalf("lock node %s is not named as Curator names it", node)
		}
		if err := m.Acquire(ctx); err != nil { // reentrant
			t.Fatal(err)
		}
		if err := m.Release(ctx); err != nil || !m.IsAcquired() {
			t.Fatalf("after one of two releases: err %v, held %v", err, m.IsAcquired())
		}
		other := NewInterProcessMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- other.Acquire(ctx) }()
		waitParticipants(t, ctx, m, 2)
		select {
		case err := <-got:
			t.Fatalf("second holder got the lock while the first holds it (err %v)", err)
		default:
		}
		if err := m.Release(ctx); err != nil || m.IsAcquired() {
			t.Fatalf("last release: err %v, held %v", err, m.IsAcquired())
		}
		if err := waitCh(t, ctx, got, "second Acquire"); err != nil {
			t.Fatal(err)
		}
		if other.Token() <= 0 {
			t.Fatalf("token %d", other.Token())
		}
		if err := m.Release(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Release of nothing = %v", err)
		}
		if err := other.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// The lock's directories are containers: the server reaps them.
		c := newClient(t)
		if !pollFor(ctx, func() bool { ok, _, err := c.Exists(ctx, path.Dir(dir)); return err == nil && !ok }) {
			t.Fatal("lock directories not reaped as containers")
		}
	})
}

func waitParticipants(t *testing.T, ctx context.Context, m *InterProcessMutex, n int) {
	t.Helper()
	if !pollFor(ctx, func() bool { ps, err := m.ParticipantNodes(ctx); return err == nil && len(ps) == n }) {
		t.Fatalf("never %d participants", n)
	}
}

// pollFor polls cond until it holds or ctx ends.
func pollFor(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Exclusion and fencing: each holder's token is larger than every
// earlier holder's, so a store checking tokens refuses a stale holder.
func TestInterProcessMutexExclusionAndFencing(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const workers, rounds = 5, 4
		var (
			inside  atomic.Int32
			mu      sync.Mutex
			highest FencingToken
			wg      sync.WaitGroup
		)
		errs := make(chan error, workers)
		for range workers {
			m := NewInterProcessMutex(newClient(t), dir, nil)
			wg.Go(func() {
				for range rounds {
					if err := m.Acquire(ctx); err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						errs <- errors.New("two holders at once")
					}
					mu.Lock()
					if m.Token() <= highest {
						errs <- errors.New("fencing token did not grow")
					}
					highest = m.Token()
					mu.Unlock()
					runtime.Gosched()
					inside.Add(-1)
					if err := m.Release(ctx); err != nil {
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
	})
}

// The holder's session expires: the next waiter gets the lock and the
// holder sees the lock lost.
func TestInterProcessMutexHolderSessionExpires(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		d := &cutter{}
		hc, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = hc.Close() })
		holder := NewInterProcessMutex(hc, dir, nil)
		if err := holder.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		next := NewInterProcessMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- next.Acquire(ctx) }()
		waitParticipants(t, ctx, holder, 2)
		d.cut(true)
		if err := waitCh(t, ctx, got, "next Acquire after the holder's session expired"); err != nil {
			t.Fatal(err)
		}
		if next.Token() <= holder.Token() {
			t.Fatalf("new holder's token %d not above the expired holder's %d", next.Token(), holder.Token())
		}
		d.cut(false)
		waitCh(t, ctx, holder.Done(), "holder's Done")
		if err := holder.Release(ctx); !errors.Is(err, ErrLost) {
			t.Fatalf("holder.Release = %v, want ErrLost", err)
		}
		if err := next.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
