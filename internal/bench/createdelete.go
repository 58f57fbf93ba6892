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

// CreateDeleteOptions is Table 2 of the paper: each of Workers sessions
// creates Count znodes of Size bytes one after another, synchronously,
// and deletes each asynchronously (without waiting) before the next
// create.
type CreateDeleteOptions struct {
	Workers int
	Count   int
	Size    int
}

// CreateDelete runs Table 2. Throughput is creates over the time until
// every worker has made its last create (the deletes still in flight
// then are waited for afterwards, outside the measure, as in the paper
// and zkload); latency is the synchronous creates'. At the end every
// znode must be gone: a delete that was lost is an error.
func CreateDelete(ctx context.Context, t Target, o CreateDeleteOptions) (*Result, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Workers < 1 || o.Count < 1 || o.Size < 0 {
		return nil, fmt.Errorf("%w: workers and count must be at least 1", ErrBadOptions)
	}
	r := &Result{Workload: "create-delete", Start: time.Now(), Servers: t.Servers,
		Workers: o.Workers, Count: o.Count, Size: o.Size}
	data := payload(o.Size, 'A')
	// A directory of its own, so runs never meet each other's znodes.
	dir := fmt.Sprintf("%s/cd/r%d", t.Root, time.Now().UnixNano())
	var errs errCount
	ss, err := connectAll(ctx, t, o.Workers, &errs)
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	if err := ensurePath(ctx, ss[0].Client, dir); err != nil {
		return nil, fmt.Errorf("create-delete setup: %w", err)
	}

	hists := make([]Hist, o.Workers)
	var created, deleted atomic.Int64
	var deletes, wg sync.WaitGroup
	meter := NewCPUMeter(t.ServerPIDs)
	prog := startProgress(t.Progress, t.ProgressEvery, func(el time.Duration) string {
		return fmt.Sprintf("create-delete: %5.1fs %d/%d creates, %d deletes, %d errors",
			el.Seconds(), created.Load(), o.Workers*o.Count, deleted.Load(), errs.n.Load())
	})
	a := meter.Sample()
	for w := range o.Workers {
		c := ss[w].Client
		wg.Go(func() {
			for i := range o.Count {
				p := fmt.Sprintf("%s/w%03d-%08d", dir, w, i)
				t0 := time.Now()
				_, _, err := c.Create(ctx, p, data, zk.Persistent, zk.OpenACLUnsafe())
				d := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					errs.add("create", err)
					continue
				}
				hists[w].Record(d)
				created.Add(1)
				deletes.Add(1)
				err = c.DeleteAsync(ctx, p, -1, func(err error) {
					defer deletes.Done()
					if err != nil {
						errs.add("delete", err)
						return
					}
					deleted.Add(1)
				})
				if err != nil {
					deletes.Done()
					errs.add("delete", err)
				}
			}
		})
	}
	wg.Wait()
	b := meter.Sample()
	deletes.Wait()
	prog.stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	kids, _, err := ss[0].Children(ctx, dir)
	switch {
	case err != nil:
		errs.add("check", err)
	case len(kids) != 0:
		errs.add("check", fmt.Errorf("%d znodes left after every delete", len(kids)))
	default:
		if err := ss[0].Delete(ctx, dir, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			errs.add("cleanup", err)
		}
	}

	var h Hist
	for i := range hists {
		h.Merge(&hists[i])
	}
	r.Creates, r.Deletes = created.Load(), deleted.Load()
	// The servers' CPU is per create, which includes its delete.
	r.measured(r.Creates, &h, a, b, &errs)
	return r, nil
}
