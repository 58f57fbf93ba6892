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

// A timed window of the cost curve: Clients sessions, each with
// Outstanding synchronous request streams, on the znodes of a fill tree,
// as shared/bench's zkload 'ops' runs it: a closed loop, or paced to a
// total rate; a warm-up, then the measured window with the servers' CPU.

// opWindow describes one window.
type opWindow struct {
	op                   string // get, set or cd (create then delete; each request counts)
	clients, outstanding int
	rate                 float64 // total requests/s; 0 is a closed loop
	warmup, duration     time.Duration
	data                 []byte
	// pick returns the znode of the next get or set; false ends the
	// stream (the window then ends when every stream has ended).
	pick func(rng *rand.Rand) (string, bool)
	// parent returns the parent of the next create+delete.
	parent func(rng *rand.Rand) string
	// held, if set, counts errors of sessions held open around the
	// window (idle ones, watchers): one lost during the window makes it
	// invalid too.
	held *errCount
	seed uint64
	// after, if set, checks the window's result once it has run (it
	// may count errors) and returns more fields for its RESULT line.
	after func(r *Result) []any
}

// runOpWindow connects the window's sessions, runs it and closes them.
func runOpWindow(ctx context.Context, t Target, w opWindow) (*Result, error) {
	var errs errCount
	ss, err := connectAll(ctx, t, w.clients, &errs)
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	heldBefore := w.held.count()
	r := &Result{Workload: "curve-" + w.op, Start: time.Now(), Servers: t.Servers, Clients: w.clients,
		Outstanding: w.outstanding, Size: len(w.data)}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var phase atomic.Int32
	var completed atomic.Int64
	tokens := pace(runCtx, w.rate)
	hists := make([]syncHist, w.clients)
	var ops atomic.Int64
	var wg sync.WaitGroup
	for i := range w.clients * w.outstanding {
		s := &stream{c: ss[i%w.clients].Client, id: i, hist: &hists[i%w.clients], w: &w,
			rng: rand.New(rand.NewPCG(w.seed, uint64(i))), phase: &phase, completed: &completed, ops: &ops, errs: &errs}
		wg.Go(func() { s.run(runCtx, tokens) })
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	meter := NewCPUMeter(t.ServerPIDs)
	prog := startProgress(t.Progress, t.ProgressEvery, func(el time.Duration) string {
		what := "measuring"
		if phase.Load() == phaseWarmup {
			what = "warm-up"
		}
		return fmt.Sprintf("  %-4s %5.1fs %-9s %d calls, %d errors", w.op, el.Seconds(), what, completed.Load(), errs.n.Load())
	})
	werr := waitOrDone(ctx, w.warmup, allDone)
	phase.Store(phaseMeasure)
	a := meter.Sample()
	if werr == nil {
		werr = waitOrDone(ctx, w.duration, allDone)
	}
	b := meter.Sample()
	phase.Store(phaseDone)
	cancelPace(tokens)
	drainMix(&wg, cancel, t.SessionTimeout+10*time.Second, &errs)
	<-allDone
	prog.stop()
	if werr != nil {
		return nil, werr
	}
	if n := w.held.count() - heldBefore; n > 0 {
		errs.add("held sessions", fmt.Errorf("%d connection losses during the window", n))
	}
	var h Hist
	for i := range hists {
		h.Merge(&hists[i].h)
	}
	r.measured(ops.Load(), &h, a, b, &errs)
	return r, nil
}

// count is the errors so far; 0 for a nil counter.
func (e *errCount) count() int64 {
	if e == nil {
		return 0
	}
	return e.n.Load()
}

// waitOrDone waits d, or until done is closed, or returns ctx's error.
func waitOrDone(ctx context.Context, d time.Duration, done <-chan struct{}) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pacer hands out one token per request at a fixed total rate. A stream
// that cannot keep up loses its tokens rather than bursting later, so
// the offered rate is never above the asked one.
type pacer struct {
	c    chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// pace returns nil for a closed loop (rate 0).
func pace(ctx context.Context, rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	p := &pacer{c: make(chan struct{}, 16), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer close(p.c) // streams waiting for a token end
		const tick = 2 * time.Millisecond
		tk := time.NewTicker(tick)
		defer tk.Stop()
		start, sent := time.Now(), 0.0
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tk.C:
				for due := rate * now.Sub(start).Seconds(); sent+1 <= due; sent++ {
					select {
					case p.c <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	return p
}

func cancelPace(p *pacer) {
	if p != nil {
		p.stop()
		<-p.done
	}
}

// stream is one synchronous request stream of a window.
type stream struct {
	c         *zk.Client
	id, seq   int
	hist      *syncHist
	w         *opWindow
	rng       *rand.Rand
	phase     *atomic.Int32
	completed *atomic.Int64
	ops       *atomic.Int64
	errs      *errCount
}

func (s *stream) run(ctx context.Context, p *pacer) {
	for s.phase.Load() != phaseDone {
		if p != nil {
			select {
			case _, ok := <-p.c:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
		}
		var ok bool
		switch s.w.op {
		case "cd":
			ok = s.createDelete(ctx)
		default:
			ok = s.getOrSet(ctx)
		}
		if !ok {
			return
		}
	}
}

// getOrSet does one call; false ends the stream.
func (s *stream) getOrSet(ctx context.Context) bool {
	path, more := s.w.pick(s.rng)
	if !more {
		return false
	}
	t0 := time.Now()
	var err error
	if s.w.op == "get" {
		_, _, err = s.c.Get(ctx, path)
	} else {
		_, err = s.c.Set(ctx, path, s.w.data, -1)
	}
	return s.done(ctx, s.w.op+" "+path, t0, err)
}

func (s *stream) createDelete(ctx context.Context) bool {
	s.seq++
	path := fmt.Sprintf("%s/c%d-%d", s.w.parent(s.rng), s.id, s.seq)
	t0 := time.Now()
	_, _, err := s.c.Create(ctx, path, s.w.data, zk.Persistent, zk.OpenACLUnsafe())
	if !s.done(ctx, "create", t0, err) {
		return false
	}
	if err != nil {
		return true
	}
	t0 = time.Now()
	return s.done(ctx, "delete", t0, s.c.Delete(ctx, path, -1))
}

// done records a call: its latency in the window, or its error. False
// ends the stream: the window was cancelled or the session is gone.
func (s *stream) done(ctx context.Context, what string, t0 time.Time, err error) bool {
	d := time.Since(t0)
	s.completed.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		s.errs.add(what, err)
		return !fatal(err)
	}
	if s.phase.Load() == phaseMeasure {
		s.hist.Record(d)
		s.ops.Add(1)
	}
	return true
}

// fatal errors end a session's use.
func fatal(err error) bool {
	return errors.Is(err, zk.ErrClosed) || errors.Is(err, zk.ErrSessionExpired)
}
