package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/zk"
)

// BarrierOptions is Table 3 of the paper: Clients sessions enter Barriers
// double barriers in succession, then leave them in succession.
type BarrierOptions struct {
	Clients  int
	Barriers int
	// WaitTimeout fails a run whose barrier wait takes longer: a lost
	// watch event would otherwise hang it.
	WaitTimeout time.Duration // default 60 s
}

// barrierRun is the state the clients of one run share.
type barrierRun struct {
	clients int
	timeout time.Duration
	calls   atomic.Int64 // ZooKeeper calls made, every client
	passed  atomic.Int64 // barrier enters + leaves done, for progress
}

// Barrier runs Table 3 with the double barrier of the ZooKeeper recipes
// (paper section 2.4): to enter, a client creates its ephemeral child and
// waits for "ready", which the client that sees the last child arrive
// creates; to leave, the lowest child waits for the highest to go and
// every other child deletes itself and waits for the lowest. The figure
// is the paper's: the mean over clients of the time each took.
func Barrier(ctx context.Context, t Target, o BarrierOptions) (*Result, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Clients < 1 || o.Barriers < 1 {
		return nil, fmt.Errorf("%w: clients and barriers must be at least 1", ErrBadOptions)
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = 60 * time.Second
	}
	r := &Result{Workload: "barrier", Start: time.Now(), Servers: t.Servers, Clients: o.Clients, Barriers: o.Barriers}
	dir := fmt.Sprintf("%s/barrier/r%d", t.Root, time.Now().UnixNano())
	var errs errCount
	ss, err := connectAll(ctx, t, o.Clients, &errs)
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	c0 := ss[0].Client
	if err := ensurePath(ctx, c0, dir); err != nil {
		return nil, fmt.Errorf("barrier setup: %w", err)
	}
	bpaths := make([]string, o.Barriers)
	for i := range bpaths {
		bpaths[i] = fmt.Sprintf("%s/b%05d", dir, i)
	}
	if err := parallel(len(bpaths), 100, func(i int) error {
		_, _, err := c0.Create(ctx, bpaths[i], nil, zk.Persistent, zk.OpenACLUnsafe())
		return err
	}); err != nil {
		return nil, fmt.Errorf("barrier setup: %w", err)
	}

	br := &barrierRun{clients: o.Clients, timeout: o.WaitTimeout}
	hists := make([]Hist, o.Clients)
	meter := NewCPUMeter(t.ServerPIDs)
	prog := startProgress(t.Progress, t.ProgressEvery, func(el time.Duration) string {
		return fmt.Sprintf("barrier: %5.1fs %d/%d enters+leaves, %d errors",
			el.Seconds(), br.passed.Load(), 2*o.Clients*o.Barriers, errs.n.Load())
	})
	a := meter.Sample()
	var wg sync.WaitGroup
	for k := range o.Clients {
		c := ss[k].Client
		me := fmt.Sprintf("p%05d", k)
		wg.Go(func() {
			t0 := time.Now()
			if err := br.client(ctx, c, bpaths, me); err != nil {
				errs.add("barrier", err)
				return
			}
			hists[k].Record(time.Since(t0))
		})
	}
	wg.Wait()
	b := meter.Sample()
	prog.stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if errs.n.Load() == 0 {
		if err := removeTree(ctx, c0, dir); err != nil {
			errs.add("cleanup", err)
		}
	}

	var h Hist
	for i := range hists {
		h.Merge(&hists[i])
	}
	r.BarrierMeanS = h.Mean().Seconds()
	r.BarrierMaxS = h.Max().Seconds()
	r.ZKOps = br.calls.Load()
	r.measured(r.ZKOps, &h, a, b, &errs)
	return r, nil
}

// client enters every barrier, then leaves every barrier.
func (br *barrierRun) client(ctx context.Context, c *zk.Client, bpaths []string, me string) error {
	for _, b := range bpaths {
		if err := br.enter(ctx, c, b, me); err != nil {
			return err
		}
		br.passed.Add(1)
	}
	for _, b := range bpaths {
		if err := br.leave(ctx, c, b, me); err != nil {
			return err
		}
		br.passed.Add(1)
	}
	return nil
}

func (br *barrierRun) enter(ctx context.Context, c *zk.Client, b, me string) error {
	br.calls.Add(1)
	if _, _, err := c.Create(ctx, b+"/"+me, nil, zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
		return fmt.Errorf("enter: %w", err)
	}
	for {
		br.calls.Add(1)
		ok, _, ch, err := c.ExistsW(ctx, b+"/ready")
		if err != nil {
			return fmt.Errorf("enter: %w", err)
		}
		if ok {
			return nil
		}
		br.calls.Add(1)
		kids, _, err := c.Children(ctx, b)
		if err != nil {
			return fmt.Errorf("enter: %w", err)
		}
		if len(withoutReady(kids)) >= br.clients {
			br.calls.Add(1)
			_, _, err := c.Create(ctx, b+"/ready", nil, zk.Persistent, zk.OpenACLUnsafe())
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return fmt.Errorf("enter: %w", err)
			}
			return nil
		}
		if err := br.wait(ctx, ch, "enter "+b); err != nil {
			return err
		}
	}
}

func (br *barrierRun) leave(ctx context.Context, c *zk.Client, b, me string) error {
	deleted := false
	for {
		br.calls.Add(1)
		all, _, err := c.Children(ctx, b)
		if err != nil {
			return fmt.Errorf("leave: %w", err)
		}
		kids := withoutReady(all)
		if len(kids) == 0 {
			return nil
		}
		slices.Sort(kids)
		if len(kids) == 1 && kids[0] == me {
			br.calls.Add(1)
			if err := c.Delete(ctx, b+"/"+me, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("leave: %w", err)
			}
			return nil
		}
		watch := kids[0] // the others wait for the lowest
		if kids[0] == me {
			watch = kids[len(kids)-1] // the lowest waits for the highest
		} else if !deleted {
			br.calls.Add(1)
			if err := c.Delete(ctx, b+"/"+me, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("leave: %w", err)
			}
			deleted = true
		}
		br.calls.Add(1)
		ok, _, ch, err := c.ExistsW(ctx, b+"/"+watch)
		if err != nil {
			return fmt.Errorf("leave: %w", err)
		}
		if ok {
			if err := br.wait(ctx, ch, "leave "+b); err != nil {
				return err
			}
		}
	}
}

// wait waits for a one-time watch's event. The event is only a cue to
// look again; an end of the watch other than a change is an error.
func (br *barrierRun) wait(ctx context.Context, ch <-chan zk.Event, what string) error {
	tm := time.NewTimer(br.timeout)
	defer tm.Stop()
	select {
	case ev, ok := <-ch:
		if !ok || ev.Type == zk.EventNotWatching {
			return fmt.Errorf("%s: watch ended: %v", what, ev.Err)
		}
		return nil
	case <-tm.C:
		return fmt.Errorf("%s: no watch event within %v", what, br.timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func withoutReady(kids []string) []string {
	out := kids[:0:0]
	for _, k := range kids {
		if k != "ready" {
			out = append(out, k)
		}
	}
	return out
}

// removeTree deletes path and everything below it, children first.
func removeTree(ctx context.Context, c *zk.Client, path string) error {
	kids, _, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := parallel(len(kids), 64, func(i int) error { return removeTree(ctx, c, path+"/"+kids[i]) }); err != nil {
		return err
	}
	if err := c.Delete(ctx, path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
