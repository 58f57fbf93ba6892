package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/zk"
)

// MixOptions is Table 1 / Figure 5 of the paper: saturated getData and
// setData of Size bytes on random ones of Keys znodes, ReadPercent of them
// reads, with Outstanding requests in flight on each of Clients sessions.
type MixOptions struct {
	Clients     int
	Outstanding int
	ReadPercent float64 // 0..100
	Size        int
	Keys        int
	Duration    time.Duration // the measured window
	Warmup      time.Duration // unmeasured, before the window
	Seed        uint64        // of the key and read/write choices
}

// ErrBadOptions wraps every invalid workload parameter.
var ErrBadOptions = errors.New("bench: invalid options")

func (o MixOptions) check() error {
	switch {
	case o.Clients < 1, o.Outstanding < 1, o.Keys < 1:
		return fmt.Errorf("%w: clients, outstanding and keys must be at least 1", ErrBadOptions)
	case o.ReadPercent < 0 || o.ReadPercent > 100:
		return fmt.Errorf("%w: read percent %v outside 0..100", ErrBadOptions, o.ReadPercent)
	case o.Size < 0, o.Duration <= 0, o.Warmup < 0:
		return fmt.Errorf("%w: size, duration or warm-up out of range", ErrBadOptions)
	}
	return nil
}

// Phases of a timed run: requests completed in measure are counted.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// mixSession holds the measures of one session's request streams.
type mixSession struct {
	hist          syncHist
	reads, writes atomic.Int64
}

// Mix runs Table 1. Every session runs Outstanding goroutines, each
// issuing one synchronous call after another; the zk client multiplexes
// them on the session's connection, so each session keeps Outstanding
// requests pipelined (Result.InFlight checks it by Little's law).
func Mix(ctx context.Context, t Target, o MixOptions) (*Result, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	r := &Result{Workload: "mix", Start: time.Now(), Servers: t.Servers, Clients: o.Clients,
		Outstanding: o.Outstanding, ReadPercent: o.ReadPercent, Size: o.Size, Keys: o.Keys}
	data := payload(o.Size, 'a')
	dir := t.Root + "/mix"
	paths := make([]string, o.Keys)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/k%06d", dir, i)
	}
	var errs errCount
	ss, err := connectAll(ctx, t, o.Clients, &errs)
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	if err := mixSetup(ctx, ss[0].Client, dir, paths, data); err != nil {
		return nil, fmt.Errorf("mix setup: %w", err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var phase atomic.Int32
	var completed atomic.Int64 // every answered call, for the progress line
	sessions := make([]mixSession, o.Clients)
	var wg sync.WaitGroup
	for i := range o.Clients * o.Outstanding {
		m := &sessions[i%o.Clients]
		c := ss[i%o.Clients].Client
		rng := rand.New(rand.NewPCG(o.Seed, uint64(i)))
		wg.Go(func() { m.run(runCtx, c, rng, paths, data, o.ReadPercent/100, &phase, &completed, &errs) })
	}

	meter := NewCPUMeter(t.ServerPIDs)
	prog := startProgress(t.Progress, t.ProgressEvery, func(el time.Duration) string {
		what := "measuring"
		if phase.Load() == phaseWarmup {
			what = "warm-up"
		}
		return fmt.Sprintf("mix %3.0f%% reads: %5.1fs %-9s %d calls, %d errors", o.ReadPercent, el.Seconds(), what, completed.Load(), errs.n.Load())
	})
	var a, b CPUSample
	werr := waitFor(ctx, o.Warmup)
	if werr == nil {
		phase.Store(phaseMeasure)
		a = meter.Sample()
		werr = waitFor(ctx, o.Duration)
		b = meter.Sample()
	}
	phase.Store(phaseDone)
	drainMix(&wg, cancel, t.SessionTimeout+10*time.Second, &errs)
	prog.stop()
	if werr != nil {
		return nil, werr
	}

	var h Hist
	for i := range sessions {
		h.Merge(&sessions[i].hist.h)
		r.Reads += sessions[i].reads.Load()
		r.Writes += sessions[i].writes.Load()
	}
	r.measured(r.Reads+r.Writes, &h, a, b, &errs)
	r.InFlight = r.OpsPerSec * h.Mean().Seconds()
	return r, nil
}

// mixSetup creates the keys (or resets their data), 100 calls in flight.
func mixSetup(ctx context.Context, c *zk.Client, dir string, paths []string, data []byte) error {
	if err := ensurePath(ctx, c, dir); err != nil {
		return err
	}
	return parallel(len(paths), 100, func(i int) error {
		_, _, err := c.Create(ctx, paths[i], data, zk.Persistent, zk.OpenACLUnsafe())
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = c.Set(ctx, paths[i], data, -1)
		}
		return err
	})
}

// run is one request stream: one synchronous call after another.
func (m *mixSession) run(ctx context.Context, c *zk.Client, rng *rand.Rand, paths []string, data []byte,
	readFrac float64, phase *atomic.Int32, completed *atomic.Int64, errs *errCount) {
	for phase.Load() != phaseDone {
		p := paths[rng.IntN(len(paths))]
		read := rng.Float64() < readFrac
		t0 := time.Now()
		var err error
		if read {
			var got []byte
			got, _, err = c.Get(ctx, p)
			if err == nil && len(got) != len(data) {
				err = fmt.Errorf("getData %s returned %d bytes, want %d", p, len(got), len(data))
			}
		} else {
			_, err = c.Set(ctx, p, data, -1)
		}
		d := time.Since(t0)
		completed.Add(1)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			op := "setData"
			if read {
				op = "getData"
			}
			errs.add(op, err)
			if errors.Is(err, zk.ErrClosed) || errors.Is(err, zk.ErrSessionExpired) {
				return
			}
			continue
		}
		if phase.Load() == phaseMeasure {
			m.hist.Record(d)
			if read {
				m.reads.Add(1)
			} else {
				m.writes.Add(1)
			}
		}
	}
}

// drainMix waits for the workers to finish the calls they have in flight;
// if the servers stop answering, it cancels the calls after limit and
// counts that as an error rather than hang.
func drainMix(wg *sync.WaitGroup, cancel context.CancelFunc, limit time.Duration, errs *errCount) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case <-done:
	case <-tm.C:
		errs.add("drain", fmt.Errorf("calls still unanswered %v after the window", limit))
		cancel()
		<-done
	}
}

// waitFor waits d, or returns ctx's error if it ends first.
func waitFor(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
