package recipe

import (
	"fmt"
	"sync"
	"testing"
)

// Ref: recipes guide, "Priority Queues": the most urgent item first, and
// among equals the oldest.
func TestPriorityQueue(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		q := NewPriorityQueue(newClient(t), dir, nil)
		in := []struct {
			v    string
			prio int
		}{{"c1", 5}, {"a1", 1}, {"b1", 3}, {"a2", 1}, {"z", 99999}, {"c2", 5}}
		for _, it := range in {
			if err := q.Put(ctx, []byte(it.v), it.prio); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Put(ctx, nil, MaxPriority+1); err == nil {
			t.Fatal("priority out of range accepted")
		}
		for _, want := range []string{"a1", "a2", "b1", "c1", "c2", "z"} {
			v, err := q.Take(ctx)
			if err != nil || string(v) != want {
				t.Fatalf("Take = %q, %v; want %q", v, err, want)
			}
		}
	})
}

// Ref: recipes guide, "Revocable Shared Locks": a revoker asks, the
// holder is told and releases; the waiter then gets the lock.
func TestRevoke(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		holder := NewRWMutex(newClient(t), dir, nil)
		if err := holder.RLock(ctx); err != nil {
			t.Fatal(err)
		}
		w := NewRWMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- w.Lock(ctx) }()
		rc := newClient(t)
		hs, err := Holders(ctx, rc, dir)
		if err != nil || len(hs) != 1 {
			t.Fatalf("Holders = %v, %v", hs, err)
		}
		select {
		case <-holder.RRevoked():
			t.Fatal("revoked before anyone asked")
		default:
		}
		if err := Revoke(ctx, rc, hs[0]); err != nil {
			t.Fatal(err)
		}
		waitCh(t, ctx, holder.RRevoked(), "revocation")
		select {
		case <-holder.RDone():
			t.Fatal("a revoked lock is still held until its holder releases it")
		default:
		}
		if err := holder.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, got, "writer"); err != nil {
			t.Fatal(err)
		}
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Ref: recipes guide, "Two-phased Commit": all commit -> every site
// commits; one abort -> every site aborts.
func TestTwoPhaseCommit(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		for n, tc := range []struct {
			name  string
			votes []bool
			want  bool
		}{
			{"all commit", []bool{true, true, true, true}, true},
			{"one abort", []bool{true, false, true, true}, false},
		} {
			tx := dir + "/" + fmt.Sprint(n)
			sites := make([]string, len(tc.votes))
			for i := range sites {
				sites[i] = fmt.Sprintf("s%d", i)
			}
			if err := BeginTxn(ctx, newClient(t), tx, sites, nil); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i, v := range tc.votes {
				c := newClient(t)
				wg.Go(func() {
					got, err := Vote(ctx, c, tx, sites[i], v)
					if err != nil || got != tc.want {
						t.Errorf("%s: site %d outcome %v, %v; want %v", tc.name, i, got, err, tc.want)
					}
				})
			}
			wg.Wait()
		}
		if _, err := Vote(ctx, newClient(t), dir+"/9", "nobody", true); err == nil {
			t.Fatal("vote by a non-participant accepted")
		}
	})
}
