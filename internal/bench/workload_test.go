package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/internal/zktest/inproc"
	"github.com/zoohq/zoo/zk"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := noGoroutinesLeft(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// noGoroutinesLeft polls until no goroutine of the workloads, the client
// or the server is left: every run stops what it started.
func noGoroutinesLeft(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, g := range zktest.Goroutines() {
			if strings.Contains(g, "bench.TestMain") {
				continue
			}
			for _, pkg := range []string{"zoo/internal/bench.", "zoo/zk.", "zoo/internal/server."} {
				if strings.Contains(g, pkg) {
					left = append(left, g)
					break
				}
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d goroutines left after the tests:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling, with the deadline above
	}
}

// startZoo runs an in-process Zoo server (in memory) on a free port.
func startZoo(t *testing.T) string {
	t.Helper()
	return inproc.Standalone(t)
}

func testTarget(t *testing.T, addr string) Target {
	return Target{Servers: []string{addr}, SessionTimeout: 4 * time.Second, ConnectTimeout: 10 * time.Second,
		Root: "/bench-" + strings.ReplaceAll(t.Name(), "/", "-")}
}

func client(t *testing.T, addr string) *zk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func checkValid(t *testing.T, r *Result) {
	t.Helper()
	if !r.Valid || r.Errors != 0 {
		t.Fatalf("run not valid: %d errors %v", r.Errors, r.ErrorSamples)
	}
	if r.WindowS <= 0 || r.OpsPerSec <= 0 {
		t.Fatalf("window %v s, %v ops/s", r.WindowS, r.OpsPerSec)
	}
	if got := float64(r.Ops) / r.WindowS; got != r.OpsPerSec {
		t.Errorf("ops/s %v, but ops/window = %v", r.OpsPerSec, got)
	}
}

func TestMix(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	tg.ServerPIDs = []int{os.Getpid()} // the server runs in this process
	tg.BufferedReads = true
	var prog bytes.Buffer
	tg.Progress, tg.ProgressEvery = &prog, 20*time.Millisecond
	o := MixOptions{Clients: 2, Outstanding: 4, ReadPercent: 50, Size: 100, Keys: 10,
		Duration: 500 * time.Millisecond, Warmup: 50 * time.Millisecond, Seed: 1}
	r, err := Mix(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, r)
	if r.Ops != r.Reads+r.Writes || r.Latency.Count != r.Ops {
		t.Errorf("ops %d, reads %d + writes %d, histogram %d: want all to agree", r.Ops, r.Reads, r.Writes, r.Latency.Count)
	}
	if r.Reads == 0 || r.Writes == 0 {
		t.Errorf("50%% reads gave %d reads and %d writes", r.Reads, r.Writes)
	}
	l := r.Latency
	if !(l.P50Ms <= l.P90Ms && l.P90Ms <= l.P99Ms && l.P99Ms <= l.P999Ms && l.P999Ms <= l.MaxMs && l.MeanMs <= l.MaxMs) {
		t.Errorf("percentiles out of order: %+v", l)
	}
	// Little's law: no more in flight than the streams issued.
	if issued := float64(o.Clients * o.Outstanding); r.InFlight <= 0 || r.InFlight > 1.2*issued {
		t.Errorf("in flight %.1f of %v issued", r.InFlight, issued)
	}
	if r.CPU == nil || r.CPU.ServerSeconds < 0 || r.CPU.ServerPerOpMicros != r.CPU.ServerSeconds/float64(r.Ops)*1e6 {
		t.Errorf("cpu %+v", r.CPU)
	}
	c := client(t, addr)
	kids, _, err := c.Children(context.Background(), tg.Root+"/mix")
	if err != nil || len(kids) != o.Keys {
		t.Errorf("keys: %v, %v; want %d", kids, err, o.Keys)
	}
	data, _, err := c.Get(context.Background(), tg.Root+"/mix/k000003")
	if err != nil || len(data) != o.Size {
		t.Errorf("a key holds %d bytes, %v; want %d", len(data), err, o.Size)
	}
	if p := prog.String(); !strings.Contains(p, "mix  50% reads") || !strings.HasSuffix(p, "\n") {
		t.Errorf("progress output %q", p)
	}

	// Writes only: every op is a write, and a second run reuses the keys.
	o.ReadPercent, o.Duration, o.Warmup = 0, 200*time.Millisecond, 0
	tg.ServerPIDs, tg.Progress, tg.BufferedReads = nil, nil, false
	r, err = Mix(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, r)
	if r.Reads != 0 || r.Writes != r.Ops || r.CPU != nil {
		t.Errorf("0%% reads: reads %d writes %d ops %d cpu %+v", r.Reads, r.Writes, r.Ops, r.CPU)
	}
}

func TestCreateDelete(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	r, err := CreateDelete(context.Background(), tg, CreateDeleteOptions{Workers: 3, Count: 40, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, r)
	if r.Creates != 120 || r.Deletes != 120 || r.Ops != 120 || r.Latency.Count != 120 {
		t.Errorf("creates %d deletes %d ops %d histogram %d; want 120 each", r.Creates, r.Deletes, r.Ops, r.Latency.Count)
	}
	kids, _, err := client(t, addr).Children(context.Background(), tg.Root+"/cd")
	if err != nil || len(kids) != 0 {
		t.Errorf("left under %s/cd: %v, %v", tg.Root, kids, err)
	}
}

func TestBarrier(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	const C, B = 4, 5
	r, err := Barrier(context.Background(), tg, BarrierOptions{Clients: C, Barriers: B, WaitTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, r)
	if r.Latency.Count != C {
		t.Errorf("histogram holds %d client times, want %d", r.Latency.Count, C)
	}
	// Every enter and every leave takes at least two calls.
	if r.ZKOps < 4*C*B || r.Ops != r.ZKOps {
		t.Errorf("%d calls (ops %d) for %d clients x %d barriers", r.ZKOps, r.Ops, C, B)
	}
	if r.BarrierMaxS < r.BarrierMeanS || r.BarrierMeanS <= 0 {
		t.Errorf("mean %v s, max %v s", r.BarrierMeanS, r.BarrierMaxS)
	}
	kids, _, err := client(t, addr).Children(context.Background(), tg.Root+"/barrier")
	if err != nil || len(kids) != 0 {
		t.Errorf("left under %s/barrier: %v, %v", tg.Root, kids, err)
	}
}

func TestFill(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	o := FillOptions{Znodes: 250, Size: 10, Clients: 2, Outstanding: 5, Fanout: 100}
	r, err := Fill(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, r)
	if r.Creates != 250 || r.Ops != 250 || r.Latency.Count != 250 {
		t.Errorf("creates %d ops %d histogram %d; want 250", r.Creates, r.Ops, r.Latency.Count)
	}
	n, err := client(t, addr).GetAllChildrenNumber(context.Background(), tg.Root+"/fill")
	if err != nil || n != 250+3 {
		t.Errorf("%d znodes below the fill root, %v; want 250 and 3 parents", n, err)
	}
	// The same fill again finds every znode there: each failed create
	// is counted and the run is not valid.
	r, err = Fill(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid || r.Errors != 250 || r.Creates != 0 || len(r.ErrorSamples) == 0 {
		t.Errorf("second fill: valid %v, %d errors, %d creates, samples %v", r.Valid, r.Errors, r.Creates, r.ErrorSamples)
	}
}

func TestBadOptions(t *testing.T) {
	ctx := context.Background()
	tg := Target{Servers: []string{"127.0.0.1:1"}}
	for name, run := range map[string]func() error{
		"mix read percent": func() error {
			_, err := Mix(ctx, tg, MixOptions{Clients: 1, Outstanding: 1, Keys: 1, ReadPercent: 101, Duration: time.Second})
			return err
		},
		"mix no clients": func() error {
			_, err := Mix(ctx, tg, MixOptions{Outstanding: 1, Keys: 1, Duration: time.Second})
			return err
		},
		"create-delete": func() error { _, err := CreateDelete(ctx, tg, CreateDeleteOptions{Workers: 1}); return err },
		"barrier":       func() error { _, err := Barrier(ctx, tg, BarrierOptions{Clients: 0, Barriers: 1}); return err },
		"fill":          func() error { _, err := Fill(ctx, tg, FillOptions{Znodes: -1}); return err },
	} {
		if err := run(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%s: %v, want ErrBadOptions", name, err)
		}
	}
	if _, err := Fill(ctx, Target{}, FillOptions{Znodes: 1}); !errors.Is(err, ErrNoServers) {
		t.Errorf("no servers: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tg := Target{Servers: []string{addr}, ConnectTimeout: 300 * time.Millisecond}
	if _, err := CreateDelete(context.Background(), tg, CreateDeleteOptions{Workers: 2, Count: 1}); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %v; want one naming %s", err, addr)
	}
}

// cutOnMeasure is a progress writer that cuts the link (and heals it at
// once) the first time the run reports that it is measuring.
type cutOnMeasure struct {
	link *zktest.Link
	done bool
}

func (c *cutOnMeasure) Write(p []byte) (int, error) {
	if !c.done && bytes.Contains(p, []byte("measuring")) {
		c.done = true
		c.link.SetCut(true)
		c.link.SetCut(false)
	}
	return len(p), nil
}

func TestLostConnectionMakesRunInvalid(t *testing.T) {
	addr := startZoo(t)
	link, err := zktest.NewLink(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	tg := testTarget(t, link.Addr())
	tg.Progress, tg.ProgressEvery = &cutOnMeasure{link: link}, 10*time.Millisecond
	r, err := Mix(context.Background(), tg, MixOptions{Clients: 2, Outstanding: 2, ReadPercent: 50, Keys: 5,
		Duration: 500 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid || r.Errors == 0 {
		t.Fatalf("a run whose connections broke is valid: %d errors", r.Errors)
	}
	found := false
	for _, s := range r.ErrorSamples {
		found = found || strings.Contains(s, "session "+link.Addr()+": Disconnected")
	}
	if !found {
		t.Errorf("no lost session among the errors: %v", r.ErrorSamples)
	}
}

func TestBufferedConnKeepsWritev(t *testing.T) {
	// net.Buffers writes with one writev only to a connection that has
	// the TCP connection's (unexported) writeBuffers method; the
	// buffering wrapper must keep it, or each request frame becomes a
	// syscall of its own. WriteTo works either way, and the method cannot
	// be named outside package net, so check what carries it: the
	// wrapper exposes *net.TCPConn's own methods (SetNoDelay), which a
	// wrapper of the net.Conn interface would not.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	nc, err := bufferedDial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	srv := <-accepted
	if srv == nil {
		t.Fatal("no connection accepted")
	}
	defer srv.Close()
	if _, ok := nc.(interface{ SetNoDelay(bool) error }); !ok {
		t.Fatalf("%T does not expose the *net.TCPConn it wraps", nc)
	}
	bufs := net.Buffers{[]byte("ab"), []byte("cd")}
	if n, err := bufs.WriteTo(nc); n != 4 || err != nil {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(srv, got); err != nil || string(got) != "abcd" {
		t.Fatalf("server read %q, %v", got, err)
	}
	if _, err := srv.Write([]byte("xyz")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(nc, got[:3]); err != nil || string(got[:3]) != "xyz" {
		t.Fatalf("client read %q, %v", got[:3], err)
	}
}
