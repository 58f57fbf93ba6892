// Command recipe-barrier runs the double-barrier workload of the paper's
// Table 3 (section 5.3) with package recipe's DoubleBarrier: C clients,
// each with a session of its own, enter B barriers in succession, then
// leave the B barriers in succession. Like zkload's barrier command
// (/work/shared/bench/zkload), it reports the time each client took from
// its first Enter to its last Leave, averaged over the clients (the
// paper's measure), and the maximum. Servers keep at most maxClientCnxns
// (default 60) sessions per client address: for more clients, set
// maxClientCnxns=0 in their zoo.cfg.
//
//	go run ./bench/recipe-barrier -servers 127.0.0.1:2181 -clients 50 -barriers 200
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

func main() {
	servers := flag.String("servers", "127.0.0.1:2181", "comma-separated server addresses; clients are spread over them round-robin")
	clients := flag.Int("clients", 50, "number of clients, one session each")
	barriers := flag.Int("barriers", 200, "number of barriers entered and left in succession")
	root := flag.String("root", "/bench/recipe-barrier", "parent znode of the run's barriers")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if *clients < 1 || *barriers < 1 {
		log.Fatal("-clients and -barriers must be at least 1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	conns, err := connectAll(ctx, strings.Split(*servers, ","), *clients)
	if err != nil {
		log.Fatal(err)
	}
	defer closeAll(conns)

	// Each barrier is a directory of its own, as the recipe requires (its
	// "ready" node stays once the barrier opened).
	// As in zkload, they are created before the clock starts.
	run := fmt.Sprintf("%s/r%d", *root, time.Now().UnixNano())
	if err := setup(ctx, conns[0], run, *barriers); err != nil {
		log.Fatal(err)
	}
	times, err := runClients(ctx, conns, run, *barriers)
	if err != nil {
		log.Fatal(err)
	}
	if err := cleanup(ctx, conns[0], run, *barriers); err != nil {
		log.Printf("cleanup: %v", err)
	}
	avg, worst := summarize(times)
	fmt.Printf("recipe-barrier: servers=%d clients=%d barriers=%d\n", len(strings.Split(*servers, ",")), *clients, *barriers)
	fmt.Printf("  time per client: avg=%.2fs max=%.2fs\n", avg.Seconds(), worst.Seconds())
	fmt.Printf("RESULT mode=recipe-barrier clients=%d barriers=%d avg_s=%.3f max_s=%.3f\n",
		*clients, *barriers, avg.Seconds(), worst.Seconds())
}

func barrierDir(run string, i int) string { return fmt.Sprintf("%s/b%05d", run, i) }

// setup creates the run's directory and its barriers' directories.
func setup(ctx context.Context, c *zk.Client, run string, B int) error {
	for i := 1; i <= len(run); i++ {
		if i < len(run) && run[i] != '/' {
			continue
		}
		p := run[:i]
		if _, _, err := c.Create(ctx, p, nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("setup %s: %w", p, err)
		}
	}
	for i := range B {
		if _, _, err := c.Create(ctx, barrierDir(run, i), nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	return nil
}

// cleanup removes what the run left: each barrier's "ready" node and directory.
func cleanup(ctx context.Context, c *zk.Client, run string, B int) error {
	for i := range B {
		d := barrierDir(run, i)
		for _, p := range []string{d + "/ready", d} {
			if err := c.Delete(ctx, p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
		}
	}
	return c.Delete(ctx, run, -1)
}

// runClients starts every client at once and returns the time each took.
func runClients(ctx context.Context, conns []*zk.Client, run string, B int) ([]time.Duration, error) {
	times := make([]time.Duration, len(conns))
	errs := make([]error, len(conns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k, c := range conns {
		bs := make([]*recipe.DoubleBarrier, B)
		for i := range bs {
			bs[i] = recipe.NewDoubleBarrier(c, barrierDir(run, i), fmt.Sprintf("p%05d", k), len(conns), nil)
		}
		wg.Go(func() {
			<-start
			t0 := time.Now()
			errs[k] = enterLeave(ctx, bs)
			times[k] = time.Since(t0)
		})
	}
	close(start)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
	}
	return times, nil
}

// enterLeave is one client's work: enter every barrier, then leave every one.
func enterLeave(ctx context.Context, bs []*recipe.DoubleBarrier) error {
	for i, b := range bs {
		if err := b.Enter(ctx); err != nil {
			return fmt.Errorf("enter barrier %d: %w", i, err)
		}
	}
	for i, b := range bs {
		if err := b.Leave(ctx); err != nil {
			return fmt.Errorf("leave barrier %d: %w", i, err)
		}
	}
	return nil
}

func summarize(times []time.Duration) (avg, worst time.Duration) {
	var sum time.Duration
	for _, t := range times {
		sum += t
		worst = max(worst, t)
	}
	return sum / time.Duration(len(times)), worst
}

func connectAll(ctx context.Context, servers []string, n int) ([]*zk.Client, error) {
	conns := make([]*zk.Client, n)
	for i := range conns {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		c, err := zk.Connect(cctx, servers[i%len(servers)], zk.WithSessionTimeout(30*time.Second))
		cancel()
		if err != nil {
			closeAll(conns)
			// A server keeps at most maxClientCnxns (default 60) sessions
			// per client address: set maxClientCnxns=0 for more clients.
			return nil, fmt.Errorf("connect client %d to %s (is maxClientCnxns too low?): %w", i, servers[i%len(servers)], err)
		}
		conns[i] = c
	}
	return conns, nil
}

func closeAll(conns []*zk.Client) {
	for _, c := range conns {
		if c != nil {
			_ = c.Close()
		}
	}
}
