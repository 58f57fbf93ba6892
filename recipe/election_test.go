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

// Ref: recipes guide, "Leader Election": the leader acknowledges, with a
// separate znode, that it has executed the leader procedure. Watchers of
// the acknowledgment see each leader only once it has acknowledged, and
// never one that resigned or whose session ended.
func TestElectionAcknowledgment(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		observer := newClient(t)
		c1, c2 := newClient(t), newClient(t)
		first := NewElection(c1, dir, []byte("first"), nil)
		second := NewElection(c2, dir, []byte("second"), nil)
		if err := first.Acknowledge(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Acknowledge before leading: %v; want ErrNotHeld", err)
		}
		if err := first.Campaign(ctx); err != nil {
			t.Fatal(err)
		}
		secondWon := make(chan error, 1)
		go func() { secondWon <- second.Campaign(ctx) }()

		// Leading, not yet acknowledged: an observer waits.
		acked := make(chan []byte, 1)
		go func() {
			v, err := AcknowledgedLeader(ctx, observer, dir)
			if err != nil {
				t.Errorf("AcknowledgedLeader: %v", err)
			}
			acked <- v
		}()
		if err := first.Acknowledge(ctx); err != nil {
			t.Fatal(err)
		}
		if v := waitCh(t, ctx, acked, "acknowledged leader"); string(v) != "first" {
			t.Fatalf("acknowledged leader %q; want first", v)
		}
		if err := first.Acknowledge(ctx); err != nil { // idempotent
			t.Fatalf("second Acknowledge: %v", err)
		}

		// Resigning takes the acknowledgment away before handing over.
		if err := first.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, secondWon, "second elected"); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := observer.Exists(ctx, dir+"/"+AckNode); err != nil || ok {
			t.Fatalf("acknowledgment after the leader resigned: exists=%v err=%v", ok, err)
		}
		if err := second.Acknowledge(ctx); err != nil {
			t.Fatal(err)
		}
		if v, err := AcknowledgedLeader(ctx, observer, dir); err != nil || string(v) != "second" {
			t.Fatalf("acknowledged leader %q, %v; want second", v, err)
		}

		// The acknowledgment goes with the leader's session.
		if err := c2.Close(); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := observer.Exists(ctx, dir+"/"+AckNode); err != nil || ok {
			t.Fatalf("acknowledgment after the leader's session closed: exists=%v err=%v", ok, err)
		}
	})
}
