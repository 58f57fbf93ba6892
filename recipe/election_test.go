package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// Ref: recipes guide, "Leader Election": exactly one leader at a time;
// when the leader's session ends its successor, and only it, takes over;
// a leader that resigns hands over the same way.
func TestElection(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const candidates = 5
		waiting := make(chan string, candidates)
		var woken atomic.Int32
		setHooks(t, dir, hooks{
			waiting: func(self, _ string) { waiting <- self },
			woken:   func(string) { woken.Add(1) },
		})
		type cand struct {
			e    *Election
			stop func()
			won  chan error
		}
		cs := make([]cand, candidates)
		var leaders atomic.Int32
		for i := range cs {
			c := newClient(t)
			e := NewElection(c, dir, fmt.Appendf(nil, "c%d", i), nil)
			cs[i] = cand{e: e, won: make(chan error, 1), stop: func() { _ = c.Close() }}
			go func() {
				err := e.Campaign(ctx)
				if err == nil && leaders.Add(1) != 1 {
					err = errors.New("two leaders at once")
				}
				cs[i].won <- err
			}()
			if i == 0 {
				if err := waitCh(t, ctx, cs[0].won, "first leader"); err != nil {
					t.Fatal(err)
				}
			} else {
				waitCh(t, ctx, waiting, "candidate to queue")
			}
		}
		v, err := Leader(ctx, newClient(t), dir)
		if err != nil || string(v) != "c0" {
			t.Fatalf("Leader = %q, %v; want c0", v, err)
		}
		// Even candidates lose their session, odd ones resign.
		for i := range cs {
			if i > 0 {
				if err := waitCh(t, ctx, cs[i].won, fmt.Sprintf("candidate %d elected", i)); err != nil {
					t.Fatal(err)
				}
			}
			for j := i + 1; j < candidates; j++ {
				select {
				case err := <-cs[j].won:
					t.Fatalf("candidate %d elected while %d leads (%v)", j, i, err)
				default:
				}
			}
			leaders.Add(-1)
			if i%2 == 0 {
				cs[i].stop()
				waitCh(t, ctx, cs[i].e.Done(), "Done of the stopped leader")
				if err := cs[i].e.Err(); !errors.Is(err, ErrLost) {
					t.Fatalf("Err of the stopped leader = %v, want ErrLost", err)
				}
			} else if err := cs[i].e.Resign(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := woken.Load(); n != candidates-1 {
			t.Fatalf("%d wake-ups for %d handovers, want one each", n, candidates-1)
		}
		if _, err := Leader(ctx, newClient(t), dir); !errors.Is(err, ErrNoLeader) {
			t.Fatalf("Leader after all left = %v, want ErrNoLeader", err)
		}
	})
}

// A candidate whose context ends withdraws and is never elected.
func TestElectionCampaignCancelled(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		leader := NewElection(newClient(t), dir, []byte("l"), nil)
		if err := leader.Campaign(ctx); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		e := NewElection(newClient(t), dir, []byte("x"), nil)
		if err := e.Campaign(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Campaign = %v, want context.Canceled", err)
		}
		if err := e.Resign(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Resign of a non-leader = %v, want ErrNotHeld", err)
		}
		if err := leader.Campaign(ctx); !errors.Is(err, ErrHeld) {
			t.Fatalf("Campaign of the leader = %v, want ErrHeld", err)
		}
	})
}
