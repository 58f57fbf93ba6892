package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/zk"
)

// FillOptions creates Znodes znodes of Size bytes, pipelined: the load
// of the memory and restart measurements and of the cost curve.
type FillOptions struct {
	Znodes      int
	Size        int
	Clients     int // default 4
	Outstanding int // per client; default 200
	// Fanout groups the znodes under parents of this many children
	// (root/fill/dNNNNN/nNNNNNNNN), so no znode has a million children.
	Fanout int // default 1000
	// Start, if set, is the index of the first znode to create: a fill
	// of Znodes with Start = n adds znodes n..Znodes-1 to an earlier
	// fill of n, so a tree can be grown step by step (the cost curve).
	Start int
}

// Fill runs the fill. Parents already there are reused, so fills of
// different sizes can be stacked; a znode already there is an error.
func Fill(ctx context.Context, t Target, o FillOptions) (*Result, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Clients == 0 {
		o.Clients = 4
	}
	if o.Outstanding == 0 {
		o.Outstanding = 200
	}
	if o.Fanout == 0 {
		o.Fanout = 1000
	}
	if o.Znodes < 1 || o.Size < 0 || o.Clients < 1 || o.Outstanding < 1 || o.Fanout < 1 {
		return nil, fmt.Errorf("%w: znodes, clients, outstanding and fanout must be at least 1", ErrBadOptions)
	}
	if o.Start < 0 || o.Start >= o.Znodes {
		return nil, fmt.Errorf("%w: fill start %d outside 0..%d", ErrBadOptions, o.Start, o.Znodes-1)
	}
	r := &Result{Workload: "fill", Start: time.Now(), Servers: t.Servers, Znodes: o.Znodes, Size: o.Size,
		Clients: o.Clients, Outstanding: o.Outstanding}
	data := payload(o.Size, 'a')
	dir := t.Root + "/fill"
	var errs errCount
	ss, err := connectAll(ctx, t, o.Clients, &errs)
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	if err := ensurePath(ctx, ss[0].Client, dir); err != nil {
		return nil, fmt.Errorf("fill setup: %w", err)
	}
	first, parents := o.Start/o.Fanout, (o.Znodes+o.Fanout-1)/o.Fanout
	if err := parallel(parents-first, 100, func(i int) error {
		_, _, err := ss[i%len(ss)].Create(ctx, fmt.Sprintf("%s/d%05d", dir, first+i), nil, zk.Persistent, zk.OpenACLUnsafe())
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("fill setup: %w", err)
	}

	hists := make([]syncHist, o.Clients)
	var next, created atomic.Int64
	next.Store(int64(o.Start))
	meter := NewCPUMeter(t.ServerPIDs)
	prog := startProgress(t.Progress, t.ProgressEvery, func(el time.Duration) string {
		n := created.Load()
		return fmt.Sprintf("fill: %5.1fs %d/%d znodes (%.0f/s), %d errors", el.Seconds(), n, o.Znodes-o.Start, float64(n)/el.Seconds(), errs.n.Load())
	})
	a := meter.Sample()
	var wg sync.WaitGroup
	for w := range o.Clients * o.Outstanding {
		c := ss[w%o.Clients].Client
		hist := &hists[w%o.Clients]
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= o.Znodes || ctx.Err() != nil {
					return
				}
				p := fmt.Sprintf("%s/d%05d/n%08d", dir, i/o.Fanout, i)
				t0 := time.Now()
				if _, _, err := c.Create(ctx, p, data, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
					if ctx.Err() == nil {
						errs.add("create", err)
					}
					continue
				}
				hist.Record(time.Since(t0))
				created.Add(1)
			}
		})
	}
	wg.Wait()
	b := meter.Sample()
	prog.stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var h Hist
	for i := range hists {
		h.Merge(&hists[i].h)
	}
	r.Creates = created.Load()
	r.measured(r.Creates, &h, a, b, &errs)
	return r, nil
}
