// Command expirystorm measures what a server's healthy clients see while
// many sessions expire at once (issue 14: they must be answered within a
// third of the shortest session timeout; Apache's ZOOKEEPER-1049 is this
// failure).
//
// It opens -sessions detached sessions (a handshake whose connection is
// dropped: the server holds the session until it expires) with -timeout,
// and -healthy sessions through the zk client, each issuing exists("/")
// one after another. It then freezes the server (SIGSTOP to -pid) for
// -timeout plus two ticks, so that on SIGCONT every detached session is
// past its deadline and they all expire in one check, while the healthy
// ones, whose timeout is three times the freeze, live on. From SIGCONT it
// reports how long the server took to hold only the healthy sessions
// (mntr's zk_global_sessions), and the latency of the healthy calls
// issued after SIGCONT until then, against -bound.
//
// The server needs maxSessionTimeout of at least 3 x (timeout + 2 ticks)
// and mntr in 4lw.commands.whitelist. The freeze is the only way to make
// sessions opened over tens of seconds expire together on both Apache and
// Zoo; it also stands for the GC pause or VM stall that causes such
// storms in production.
//
//	go run ./perf/expirystorm -servers 127.0.0.1:23811 -pid PID -sessions 100000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/bench"
	"github.com/zoohq/zoo/zk"
)

func main() {
	servers := flag.String("servers", "127.0.0.1:2181", "the server's client address")
	pid := flag.Int("pid", 0, "the server's process id (it is frozen with SIGSTOP)")
	n := flag.Int("sessions", 100000, "detached sessions to expire at once")
	timeout := flag.Duration("timeout", 90*time.Second, "their timeout; must exceed the time it takes to open them")
	tick := flag.Duration("tick", 2*time.Second, "the server's tickTime (expiry is checked per tick)")
	healthy := flag.Int("healthy", 5, "healthy sessions calling exists(\"/\") throughout")
	bound := flag.Duration("bound", 4*time.Second/3, "the bound on a healthy call (a third of the shortest session timeout, 2 ticks)")
	name := flag.String("name", "target", "the target's name in the RESULT line")
	flag.Parse()
	if *pid <= 0 {
		log.Fatal("expirystorm: -pid is required")
	}
	// An interrupted run still sends SIGCONT.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, config{addr: *servers, pid: *pid, n: *n, timeout: *timeout, tick: *tick, healthy: *healthy})
	if err != nil {
		log.Fatalf("expirystorm: %v", err)
	}
	fmt.Printf("RESULT target=%s sessions=%d open_s=%.1f sessions_per_s=%.0f freeze_s=%.1f storm_s=%.3f "+
		"healthy=%d calls=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f bound_ms=%.0f healthy_lost=%d valid=%t\n",
		*name, *n, res.openS, float64(*n)/res.openS, res.freezeS, res.stormS, *healthy, len(res.lat),
		ms(pct(res.lat, 0.5)), ms(pct(res.lat, 0.99)), ms(pct(res.lat, 1)), ms(*bound), res.lost,
		res.lost == 0 && pct(res.lat, 1) <= *bound)
}

type config struct {
	addr            string
	pid, n, healthy int
	timeout, tick   time.Duration
}

type result struct {
	openS, freezeS, stormS float64
	lat                    []time.Duration // healthy calls issued after SIGCONT
	lost                   int             // healthy sessions that lost their connection
}

func run(ctx context.Context, c config) (*result, error) {
	freeze := c.timeout + 2*c.tick
	t := bench.Target{Servers: []string{c.addr}, Progress: os.Stderr}
	base, err := globalSessions(ctx, c.addr)
	if err != nil {
		return nil, err
	}

	h, err := startHealthy(ctx, c.addr, c.healthy, 3*freeze)
	if err != nil {
		return nil, err
	}
	defer h.stop()

	log.Printf("opening %d detached sessions (timeout %v)", c.n, c.timeout)
	t0 := time.Now()
	ds, err := bench.OpenDetached(ctx, t, c.n, c.timeout)
	if err != nil {
		return nil, err
	}
	res := &result{openS: time.Since(t0).Seconds()}
	if res.openS >= c.timeout.Seconds() {
		_, _ = ds.Close(context.WithoutCancel(ctx), t)
		return nil, fmt.Errorf("opening took %.1f s, longer than the %v timeout: the first would expire before the freeze", res.openS, c.timeout)
	}
	want := base + c.healthy
	if got, err := globalSessions(ctx, c.addr); err != nil || got < want+c.n {
		_, _ = ds.Close(context.WithoutCancel(ctx), t)
		return nil, fmt.Errorf("the server holds %d sessions (%v), want at least %d", got, err, want+c.n)
	}

	log.Printf("opened in %.1f s; freezing the server for %v", res.openS, freeze)
	if err := syscall.Kill(c.pid, syscall.SIGSTOP); err != nil {
		return nil, err
	}
	ts := time.Now()
	select {
	case <-time.After(freeze):
	case <-ctx.Done():
	}
	if err := syscall.Kill(c.pid, syscall.SIGCONT); err != nil {
		return nil, err
	}
	cont := time.Now()
	res.freezeS = cont.Sub(ts).Seconds()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	h.measureFrom(cont)

	// The storm ends when only the healthy sessions (and those there
	// before) are left.
	for {
		got, err := globalSessions(ctx, c.addr)
		if err != nil {
			return nil, err
		}
		if got <= want {
			res.stormS = time.Since(cont).Seconds()
			break
		}
		if time.Since(cont) > 10*time.Minute {
			return nil, fmt.Errorf("%d sessions still held 10 minutes after the freeze", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	log.Printf("all %d expired %.3f s after SIGCONT", c.n, res.stormS)
	// A last second of healthy calls after the storm, then the figures.
	time.Sleep(time.Second)
	res.lat, res.lost = h.stop()
	return res, nil
}

// healthyLoad runs sessions that call exists("/") back to back, and keeps
// the latency of each call issued at or after a start time.
type healthyLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	from    time.Time // zero: not measuring yet
	lat     []time.Duration
	lost    int
	clients []*zk.Client
	done    bool
}

func startHealthy(ctx context.Context, addr string, n int, timeout time.Duration) (*healthyLoad, error) {
	ctx, cancel := context.WithCancel(ctx)
	h := &healthyLoad{cancel: cancel}
	for range n {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		connected := false
		c, err := zk.Connect(cctx, addr, zk.WithSessionTimeout(timeout), zk.WithStateCallback(func(s zk.State) {
			h.mu.Lock()
			defer h.mu.Unlock()
			switch {
			case s == zk.StateConnected:
				connected = true
			case connected && !h.done:
				h.lost++
			}
		}))
		ccancel()
		if err != nil {
			h.stop()
			return nil, err
		}
		h.clients = append(h.clients, c)
		h.wg.Go(func() { h.loop(ctx, c) })
	}
	return h, nil
}

func (h *healthyLoad) loop(ctx context.Context, c *zk.Client) {
	for ctx.Err() == nil {
		start := time.Now()
		_, _, err := c.Exists(ctx, "/")
		d := time.Since(start)
		h.mu.Lock()
		if err != nil && ctx.Err() == nil {
			h.lost++
		}
		if !h.from.IsZero() && !start.Before(h.from) {
			h.lat = append(h.lat, d)
		}
		h.mu.Unlock()
	}
}

func (h *healthyLoad) measureFrom(t time.Time) {
	h.mu.Lock()
	h.from = t
	h.mu.Unlock()
}

// stop ends the load and returns what it measured.
func (h *healthyLoad) stop() ([]time.Duration, int) {
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	for _, c := range h.clients {
		c.Close()
	}
	h.clients = nil
	return h.lat, h.lost
}

// globalSessions reads mntr's zk_global_sessions.
func globalSessions(ctx context.Context, addr string) (int, error) {
	m, err := bench.Mntr(ctx, addr)
	if err != nil {
		return 0, err
	}
	v, ok := m["zk_global_sessions"]
	if !ok {
		return 0, fmt.Errorf("%s's mntr has no zk_global_sessions", addr)
	}
	return strconv.Atoi(v)
}

// pct is the q-quantile of ds (q = 1: the maximum); 0 for none.
func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
