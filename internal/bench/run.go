// Package bench runs the workloads of the ZooKeeper paper's evaluation
// (Hunt et al., USENIX ATC 2010, section 5) against any servers that speak
// ZooKeeper's client protocol, through the public zk client: Table 1's
// read/write mix with pipelining, Table 2's synchronous creates with
// asynchronous deletes, Table 3's double barriers, and a fill. Each run
// yields a Result with an HDR-style latency histogram, and optionally the
// servers' CPU per operation from /proc.
//
// The method is that of shared/bench's zkload, so the two agree on the
// same target: one session per client, spread round-robin over the servers
// with no fail-over (a lost connection is an error of the run), and every
// failed call counted; a run with errors is not a valid result.
package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Target is where and how a workload runs.
type Target struct {
	// Servers are host:port addresses; session i goes to Servers[i%len].
	Servers        []string
	SessionTimeout time.Duration // default 15 s, as zkload's
	ConnectTimeout time.Duration // per session; default 20 s
	// Root is the znode the workloads work under (created if missing).
	Root string // default /zoo-bench
	// ServerPIDs, if set, are metered for the server CPU per op.
	ServerPIDs []int
	// Progress, if set, gets a progress line every ProgressEvery.
	Progress      io.Writer
	ProgressEvery time.Duration // default 1 s
	Logger        *slog.Logger  // the zk clients' log; default discards
	// BufferedReads puts a 64 KiB read buffer under each session's
	// socket. The zk client reads a reply's length and then its body,
	// two read calls each; on a loaded machine those syscalls are a
	// good part of the client's CPU, so without the buffer the client,
	// not the server, sets the throughput. shared/bench's zkload does the
	// same (-bufread, on by default). It changes nothing on the wire.
	BufferedReads bool
}

// ErrNoServers is returned by a workload given no server address.
var ErrNoServers = errors.New("bench: no servers")

func (t *Target) withDefaults() (Target, error) {
	c := *t
	if len(c.Servers) == 0 {
		return c, ErrNoServers
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 15 * time.Second
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 20 * time.Second
	}
	if c.Root == "" {
		c.Root = "/zoo-bench"
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// errCount counts a run's errors and keeps a few distinct messages.
type errCount struct {
	n       atomic.Int64
	mu      sync.Mutex
	samples map[string]int
}

const maxErrSamples = 10

func (e *errCount) add(what string, err error) {
	e.n.Add(1)
	msg := what
	if err != nil {
		msg += ": " + err.Error()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.samples == nil {
		e.samples = map[string]int{}
	}
	if _, ok := e.samples[msg]; ok || len(e.samples) < maxErrSamples {
		e.samples[msg]++
	}
}

// measured fills what every workload reports from its window: ops in
// total and per second, the latency summary of h and the servers' CPU per
// op between samples a and b; then it stamps the errors.
func (r *Result) measured(ops int64, h *Hist, a, b CPUSample, errs *errCount) {
	r.Ops = ops
	r.WindowS = b.at.Sub(a.at).Seconds()
	r.OpsPerSec = float64(ops) / r.WindowS
	r.Latency = summarize(h)
	var err error
	if r.CPU, err = cpuBetween(a, b, ops); err != nil {
		errs.add("cpu", err)
	}
	errs.finish(r)
}

// finish stamps the error count on r.
func (e *errCount) finish(r *Result) {
	r.Errors = e.n.Load()
	r.Valid = r.Errors == 0
	e.mu.Lock()
	defer e.mu.Unlock()
	for msg, n := range e.samples {
		r.ErrorSamples = append(r.ErrorSamples, fmt.Sprintf("x%d %s", n, msg))
	}
	sort.Strings(r.ErrorSamples)
}

// session is one client session with its server.
type session struct {
	*zk.Client
	server  string
	closing *atomic.Bool // set before a deliberate Close
}

// watchState returns a state callback that counts, as errors, the
// session's connection breaking after it was first up: calls may have
// been lost, so the run's figures are suspect. Callbacks arrive in order
// on the client's callback goroutine, possibly after Connect has
// returned, so "after it was up" is judged from the callbacks themselves.
func watchState(server string, closing *atomic.Bool, errs *errCount) func(zk.State) {
	connected := false
	return func(s zk.State) {
		switch {
		case s == zk.StateConnected:
			connected = true
		case connected && !closing.Load() && s != zk.StateClosed:
			errs.add("session "+server, errors.New(s.String()))
		}
	}
}

// connectAll opens n sessions, session i to server i mod N, 32 at a time.
func connectAll(ctx context.Context, t Target, n int, errs *errCount) ([]session, error) {
	ss := make([]session, n)
	err := parallel(n, 32, func(i int) error {
		server := t.Servers[i%len(t.Servers)]
		cctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout)
		defer cancel()
		closing := new(atomic.Bool)
		opts := []zk.Option{zk.WithSessionTimeout(t.SessionTimeout), zk.WithLogger(t.Logger),
			zk.WithStateCallback(watchState(server, closing, errs))}
		if t.BufferedReads {
			opts = append(opts, zk.WithDialer(bufferedDial))
		}
		c, err := zk.Connect(cctx, server, opts...)
		if err != nil {
			return fmt.Errorf("connect %s: %w", server, err)
		}
		ss[i] = session{Client: c, server: server, closing: closing}
		return nil
	})
	if err != nil {
		closeAll(ss)
		return nil, err
	}
	return ss, nil
}

// bufferedConn reads through a buffer: one read syscall fetches many
// replies when the client is busy. It embeds the *net.TCPConn itself, not
// a net.Conn, so that net.Buffers still finds the connection's writev and
// the client's batches of requests stay one syscall each.
type bufferedConn struct {
	*net.TCPConn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func bufferedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc, nil
	}
	return &bufferedConn{TCPConn: tc, r: bufio.NewReaderSize(tc, 64<<10)}, nil
}

func closeAll(ss []session) {
	var wg sync.WaitGroup
	for _, s := range ss {
		if s.Client != nil {
			s.closing.Store(true)
			wg.Go(func() { s.Close() })
		}
	}
	wg.Wait()
}

// ensurePath creates every missing znode of path.
func ensurePath(ctx context.Context, c *zk.Client, path string) error {
	cur := ""
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		if p == "" {
			continue
		}
		cur += "/" + p
		if _, _, err := c.Create(ctx, cur, nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// parallel runs f(0..n-1) on at most width goroutines and returns the
// first error; after one, the remaining indexes are not started.
func parallel(n, width int, f func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range min(width, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// progress prints a status line every period until stop is called. The
// line is rewritten in place (\r), as a progress bar is.
type progress struct {
	stopc chan struct{}
	done  chan struct{}
}

func startProgress(w io.Writer, every time.Duration, line func(elapsed time.Duration) string) *progress {
	p := &progress{stopc: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		close(p.done)
		return p
	}
	start := time.Now()
	go func() {
		defer close(p.done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-p.stopc:
				fmt.Fprintf(w, "\r%s\n", line(time.Since(start)))
				return
			case <-tk.C:
				fmt.Fprintf(w, "\r%s", line(time.Since(start)))
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.stopc)
	<-p.done
}

func payload(size int, base byte) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = base + byte(i%26)
	}
	return b
}
