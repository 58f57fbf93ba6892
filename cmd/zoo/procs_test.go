package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestProcsGovernor: one P while the load stays under a core, the
// runtime's default at once when one P is busy, and back only after
// procsDownPeriods quiet periods in a row.
func TestProcsGovernor(t *testing.T) {
	var g procsGovernor
	step := func(cores float64, wantOne, wantChanged bool) {
		t.Helper()
		one, changed := g.next(cores)
		if one != wantOne || changed != wantChanged {
			t.Fatalf("next(%.2f) = one %v, changed %v; want %v, %v", cores, one, changed, wantOne, wantChanged)
		}
	}
	// On the default: quiet periods count, a busy one starts the count again.
	for range procsDownPeriods - 1 {
		step(0.3, false, false)
	}
	step(0.9, false, false)
	for range procsDownPeriods - 1 {
		step(0.49, false, false)
	}
	step(0.2, true, true)
	// On one P: a load under procsUpCores stays, even above procsDownCores.
	step(0.6, true, false)
	step(0.1, true, false)
	step(procsUpCores, false, true)
	// Back on the default, a load between the two marks stays there.
	for range 3 * procsDownPeriods {
		step(0.55, false, false)
	}
}

// TestTuneProcs runs the tuner's loop on a fake clock and CPU: it reads
// cores as CPU time over the ticks' wall time, skips a failed reading,
// and sets the parallelism only when the governor changes it.
func TestTuneProcs(t *testing.T) {
	tick := make(chan time.Time)
	quit := make(chan struct{})
	done := make(chan struct{})
	type reading struct {
		cpu time.Duration
		ok  bool
	}
	readings := make(chan reading, 1)
	sets := make(chan bool, 1)
	go func() {
		defer close(done)
		cpu := func() (time.Duration, bool) { r := <-readings; return r.cpu, r.ok }
		tuneProcs(slog.New(slog.DiscardHandler), quit, tick, cpu, func(one bool) { sets <- one })
	}()
	at := time.Unix(1000, 0)
	var used time.Duration
	period := func(cores float64, ok bool) {
		at = at.Add(procsPeriod)
		if ok {
			used += time.Duration(cores * float64(procsPeriod))
		}
		tick <- at
		readings <- reading{used, ok}
	}
	wantSet := func(want bool) {
		t.Helper()
		select {
		case one := <-sets:
			if one != want {
				t.Fatalf("set(one=%v), want one=%v", one, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no set(one=%v)", want)
		}
	}
	period(0, true) // the first reading is the baseline
	period(0.5, true)
	period(5, false) // a failed reading changes nothing
	period(0.79, true)
	period(0.8, true) // busy on one P, where the tuner starts
	wantSet(false)
	for range procsDownPeriods {
		period(0.2, true)
	}
	wantSet(true)
	close(quit)
	<-done
	select {
	case one := <-sets:
		t.Fatalf("an unexpected set(one=%v)", one)
	default:
	}
}

// TestStartProcsEnvWins: with GOMAXPROCS in the environment the tuner
// does not start; without it, it starts on one P, and its stop puts the
// runtime's default back.
func TestStartProcsEnvWins(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	log := slog.New(slog.DiscardHandler)
	runtime.GOMAXPROCS(1)
	startProcs(log, func(k string) string {
		if k == "GOMAXPROCS" {
			return "1"
		}
		return ""
	})()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("with GOMAXPROCS set, the tuner changed it to %d", got)
	}
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	stop := startProcs(log, func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != 1 && def > 1 {
		t.Errorf("the tuner started on %d Ps, want 1", got)
	}
	stop()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Errorf("after the tuner stopped, GOMAXPROCS is %d, want the default %d", got, def)
	}
}

// TestServerIdlesOnOneP: an idle `zoo server` drops to one P within a few
// tuner periods, as its Prometheus endpoint shows.
func TestServerIdlesOnOneP(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: the server never runs on more than one P")
	}
	dir := t.TempDir()
	clientPort, metricsPort := freePort(t), freePort(t)
	cfg := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `dataDir=%s
clientPort=%d
admin.enableServer=false
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpHost=127.0.0.1
metricsProvider.httpPort=%d
`, filepath.Join(dir, "data"), clientPort, metricsPort), 0o644); err != nil {
		t.Fatal(err)
	}
	runZooBinaryEnv(t, buildZoo(t), dir, cfg, fmt.Sprintf("127.0.0.1:%d", clientPort), "GOMAXPROCS=")
	// The client port listens before the Prometheus endpoint starts, so
	// the endpoint may refuse the first tries.
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := getBody(url)
		if err == nil && strings.Contains(out, "\ngo_sched_gomaxprocs_threads 1\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle server still runs on more than one P (last GET: %v):\n%s", err, grepLines(out, "gomaxprocs"))
		}
		time.Sleep(procsPeriod / 2) // polling with a deadline
	}
}
