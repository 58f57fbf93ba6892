package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/zk"
)

// watches sets more data watches at each step (getData with a watch on
// distinct znodes of the tree, spread over WatchSessions sessions, as
// scale.sh does), then measures setData on unwatched znodes and setData
// that fires exactly one watch each, checking every event arrives.
// Fired watches are set again, so each step holds its number of watches.
func (c *curve) watches(ctx context.Context) error {
	if _, err := c.grow(ctx, "tree", 0, c.o.Tree); err != nil {
		return err
	}
	wt := c.t
	wt.Progress = nil
	wss, err := connectAll(ctx, wt, c.o.WatchSessions, &c.held)
	if err != nil {
		return fmt.Errorf("watch sessions: %w", err)
	}
	defer closeAll(wss)
	chans := make([]<-chan zk.Event, c.o.Steps[len(c.o.Steps)-1])
	set := 0
	tree := c.o.Tree
	for _, w := range c.o.Steps {
		pt := fmt.Sprint(w)
		rss0 := c.rss()
		c.logf("point %d: setting %d watches", w, w-set)
		meter := NewCPUMeter(c.t.ServerPIDs)
		a := meter.Sample()
		t0 := time.Now()
		if err := c.setWatches(ctx, wss, chans, set, w); err != nil {
			return err
		}
		loadS := time.Since(t0).Seconds()
		b := meter.Sample()
		added := w - set
		set = w
		s := c.state(ctx, w)
		s.GrowS, s.Added = loadS, added
		c.rep.States = append(c.rep.States, s)
		wchsOut, _ := fourLetter(ctx, c.t.Servers[0], "wchs")
		wc := parseWchs(wchsOut)
		kv := []any{"mode", "watchload", "watches", w, "watch_sessions", len(wss), "tree", tree,
			"load_s", fmt.Sprintf("%.2f", loadS), "watches_per_s", fmt.Sprintf("%.0f", float64(added)/max(loadS, 1e-9))}
		if lc, err := cpuBetween(a, b, 0); err == nil && lc != nil {
			kv = append(kv, "cpu_server_load", fmt.Sprintf("%.2f", lc.ServerCores))
		}
		c.emit(pt, 1, append(kv, "rss0_kb", rss0, "rss_kb", na(s.RSSKB), "wchs_conns", wc.Conns,
			"wchs_paths", wc.Paths, "wchs_total", wc.Total, "watch_count", na(s.Watches))...)

		heldBefore := c.held.count()
		ops := []string{"set-unwatched"}
		if w > 0 {
			ops = append(ops, "set-watched")
		}
		if err := c.reps(ctx, w, ops, func(op string) (opWindow, []any) {
			extra := []any{"watches", w, "tree", tree}
			if op == "set-unwatched" {
				return opWindow{op: "set",
					pick: func(rng *rand.Rand) (string, bool) { return c.treeName(w + rng.IntN(tree-w)), true },
				}, extra
			}
			return c.fireWindow(ctx, wss, chans, w), extra
		}); err != nil {
			return err
		}
		held := c.held.count() - heldBefore
		c.emit(pt, 1, "mode", "watchend", "watches", w, "errors", held, "valid", held == 0)
	}
	return nil
}

// setWatches sets data watches on tree znodes from..to-1, watch i on
// session i mod N, 4 calls in flight per session.
func (c *curve) setWatches(ctx context.Context, wss []session, chans []<-chan zk.Event, from, to int) error {
	return parallel(to-from, 4*len(wss), func(j int) error {
		i := from + j
		_, _, ch, err := wss[i%len(wss)].GetW(ctx, c.treeName(i))
		if err != nil {
			return fmt.Errorf("getData+watch %s: %w", c.treeName(i), err)
		}
		chans[i] = ch
		return nil
	})
}

// fireWindow sets the watched znodes 0..w-1 once each, in order, until
// the window ends; then it checks that each set fired its watch, once,
// as NodeDataChanged, and sets the fired watches again.
func (c *curve) fireWindow(ctx context.Context, wss []session, chans []<-chan zk.Event, w int) opWindow {
	var next atomic.Int64
	return opWindow{op: "set", warmup: -1,
		pick: func(*rand.Rand) (string, bool) {
			i := int(next.Add(1) - 1)
			if i >= w {
				return "", false
			}
			return c.treeName(i), true
		},
		after: func(r *Result) []any {
			fired := min(int(next.Load()), w)
			got, missing, wrong := 0, 0, 0
			deadline := time.NewTimer(10 * time.Second)
			defer deadline.Stop()
			for i := range fired {
				select {
				case e := <-chans[i]:
					if e.Type != zk.EventNodeDataChanged {
						wrong++
					}
					got++
				case <-deadline.C:
					missing = fired - i
				}
				if missing > 0 {
					break
				}
			}
			var problems []error
			if missing > 0 {
				problems = append(problems, fmt.Errorf("%d of %d fired watches not delivered in 10 s", missing, fired))
			}
			if wrong > 0 {
				problems = append(problems, fmt.Errorf("%d watch events not NodeDataChanged", wrong))
			}
			if err := c.setWatches(ctx, wss, chans, 0, fired); err != nil {
				problems = append(problems, fmt.Errorf("setting the fired watches again: %w", err))
			}
			for _, p := range problems {
				r.Errors++
				r.ErrorSamples = append(r.ErrorSamples, p.Error())
			}
			r.Valid = r.Errors == 0
			return []any{"fired", fired, "delivered", got}
		},
	}
}
