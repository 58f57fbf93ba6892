package server

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestExpiryStormKeepsPingsFast: 10,000 sessions whose clients vanish at
// once expire together, and the healthy sessions' pings must still be
// answered within a third of their timeout, and none of them expire
// (issue 14; Apache's ZOOKEEPER-1049 is this failure: the expirer's
// closeSession txns held up the pings behind them).
func TestExpiryStormKeepsPingsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 10,000 sessions")
	}
	const (
		storm   = 10000
		healthy = 5
		tick    = time.Second
		timeout = 2 * tick // the minimum the server grants
	)
	dir := t.TempDir()
	clock := &heldClock{}
	ts := startServer(t, func(c *Config) {
		c.MaxClientCnxns = 0
		c.TickTime = tick
		c.DataDir = dir // closeSession txns are fsynced, as in production
		c.Now = clock.now
	})
	var good []*thinClient
	for range healthy {
		c, err := openThin(ts.addr, int32(timeout/time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		good = append(good, c)
	}

	// The healthy clients ping as clients do, but often, so that a stall
	// shows; each records its round trips.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	rtts := make([][]time.Duration, healthy)
	errs := make([]error, healthy)
	for i, c := range good {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond): // a client's ping interval
				}
				start := time.Now()
				if err := c.ping(); err != nil {
					errs[i] = err
					return
				}
				rtts[i] = append(rtts[i], time.Since(start))
			}
		})
	}
	stopPings := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer stopPings()

	// The storm: sessions whose clients go away without closing them. The
	// server's clock stands still while they are opened, so that they
	// were all last heard from at the same time, and expire in the same
	// check.
	start := time.Now()
	clock.hold()
	openSessions(t, ts.addr, storm, int32(timeout/time.Millisecond), true)
	clock.release()
	t.Logf("opened %d sessions in %v", storm, time.Since(start).Round(time.Millisecond))
	waitFor(t, 20*timeout+30*time.Second, func() error {
		if _, n := ts.sessionCounts(); n != healthy {
			return fmt.Errorf("%d sessions left, want %d", n, healthy)
		}
		return nil
	})
	t.Logf("all expired %v after the first was opened", time.Since(start).Round(time.Millisecond))
	stopPings()

	limit := timeout / 3
	for i := range good {
		if errs[i] != nil {
			t.Errorf("healthy session %d: %v", i, errs[i])
		}
		if len(rtts[i]) == 0 {
			t.Errorf("healthy session %d: no ping answered", i)
			continue
		}
		worst := slices.Max(rtts[i])
		t.Logf("healthy session %d: %d pings, slowest %v", i, len(rtts[i]), worst.Round(time.Microsecond))
		if worst >= limit {
			t.Errorf("healthy session %d: a ping took %v, want under a third of the timeout (%v)", i, worst, limit)
		}
	}
	if _, n := ts.sessionCounts(); n != healthy {
		t.Errorf("%d sessions live, want the %d healthy ones", n, healthy)
	}
}

// heldClock is the wall clock, except that it stands still between hold
// and release, and then runs on from where it stood.
type heldClock struct {
	mu     sync.Mutex
	held   bool
	at     time.Time     // the time it stands at, while held
	behind time.Duration // how far it runs behind the wall clock
}

func (c *heldClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		return c.at
	}
	return time.Now().Add(-c.behind)
}

func (c *heldClock) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held, c.at = true, time.Now().Add(-c.behind)
}

func (c *heldClock) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held, c.behind = false, time.Since(c.at)
}
