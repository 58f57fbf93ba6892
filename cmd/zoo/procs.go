package main

import (
	"log/slog"
	"runtime"
	"time"
)

// The server's parallelism (issue 14). Go runs goroutines on GOMAXPROCS
// Ps, one per core by default. A ZooKeeper server's work is a chain of
// hand-offs: a client's reader submits to the replica loop, which hands
// the log write to its writer, whose result the loop takes back, applies
// and answers. Each hand-off readies a goroutine, and while a P is idle
// the runtime wakes another thread to look for work: a futex wake, a
// context switch, polls of the network, a short sleep before stealing, and
// a park again, for work the running thread would have reached a few
// microseconds later. Below a core of load that search is most of what
// the extra Ps do. Measured with shared/bench on the 2-core machine
// (perf/CPU.md, 2026-11-28), GOMAXPROCS=1 against the default of 2, server
// CPU per operation:
//
//   - 3 servers at 100% / 50% / 0% reads: 30% / 38% / 19% less, with more
//     throughput: epoll_wait calls per read fell from 0.25 to 0.04 on each
//     server, context switches from 0.13 to 0.02;
//   - 3 servers, one client creating synchronously: 12% less, latency the
//     same or lower; an idle ensemble: 16 ms/s of CPU against 22;
//   - 1 server, saturated by a load generator on the same 2 cores: 25%
//     less per write; per read 10% more, with 18% fewer reads a second,
//     when GOMAXPROCS=1 was set from the start, but 39-45% less, with more
//     reads a second, when this tuner moved an idle server to one P
//     before the load came (the generator then got more of the machine).
//
// So the server runs on one P while it needs less than a core, and on the
// runtime's default as soon as one P is busy: procsGovernor decides, from
// the CPU time the process used in each procsPeriod. The two states hold
// each other in place: a saturated server on the default used 0.8-0.9
// cores, on one P 0.6. It starts on one P, the state a server spends its
// life in; a restart's load then runs on one P for a period before the
// tuner sees it busy (1M znodes restarted in the same time). GOMAXPROCS
// in the environment wins: the tuner then never runs.
const (
	procsPeriod = 500 * time.Millisecond
	// procsUpCores: at one P, a period in which the process used this
	// many cores asks for the default at once. A single P kept busy shows
	// as a core or more on a machine of its own (its system calls and the
	// runtime's monitor thread add to it), but as 0.71-0.76 on the 2-core
	// machine that also runs the load generator: the other cores are then
	// taken, and more Ps would only take CPU from the others. A
	// synchronous client's creates on one server show as 0.64.
	procsUpCores = 0.8
	// procsDownCores and procsDownPeriods: on the default, this many
	// periods in a row under procsDownCores return to one P. The gap to
	// procsUpCores is the hysteresis: the same load uses fewer cores on
	// one P than on several, so it does not swing back.
	procsDownCores   = 0.5
	procsDownPeriods = 4
)

// procsGovernor is the tuner's decision, one period at a time: one P, or
// the runtime's default (many). It belongs to the tuner's goroutine.
type procsGovernor struct {
	one   bool // running on one P
	quiet int  // periods in a row under procsDownCores, while on many
}

// next takes the cores the process used in the last period and returns
// whether to run on one P from now on, and whether that is a change.
func (g *procsGovernor) next(cores float64) (one, changed bool) {
	if g.one {
		if cores >= procsUpCores {
			g.one = false
			return false, true
		}
		return true, false
	}
	if cores >= procsDownCores {
		g.quiet = 0
		return false, false
	}
	if g.quiet++; g.quiet < procsDownPeriods {
		return false, false
	}
	g.one, g.quiet = true, 0
	return true, true
}

// startProcs starts the tuner unless GOMAXPROCS is set in the
// environment, the runtime's default is already one P, or this system
// does not report the process's CPU time. It returns the function that
// stops the tuner and puts the runtime's default back.
func startProcs(log *slog.Logger, getenv func(string) string) (stop func()) {
	if v := getenv("GOMAXPROCS"); v != "" {
		log.Info("procs: GOMAXPROCS set in the environment: Zoo leaves it as it says", "GOMAXPROCS", v)
		return func() {}
	}
	if runtime.GOMAXPROCS(0) <= 1 {
		return func() {}
	}
	if _, ok := processCPU(); !ok {
		log.Info("procs: this system does not report the process's CPU time: running on every core")
		return func() {}
	}
	setProcs(true)
	quit, done := make(chan struct{}), make(chan struct{})
	t := time.NewTicker(procsPeriod)
	go func() {
		defer close(done)
		tuneProcs(log, quit, t.C, processCPU, setProcs)
	}()
	return func() {
		t.Stop()
		close(quit)
		<-done
		setProcs(false)
	}
}

// setProcs runs the server on one P, or puts the runtime's default back
// (which also resumes the runtime's own updates of it, as a CPU quota
// changes).
func setProcs(one bool) {
	if one {
		runtime.GOMAXPROCS(1)
		return
	}
	runtime.SetDefaultGOMAXPROCS()
}

// tuneProcs moves the server between one P, where the caller has put it,
// and the runtime's default on each tick, by the CPU time cpu reports,
// until quit closes. A period in which cpu fails leaves the setting as it
// is.
func tuneProcs(log *slog.Logger, quit <-chan struct{}, tick <-chan time.Time,
	cpu func() (time.Duration, bool), set func(one bool)) {
	g := procsGovernor{one: true}
	var last time.Duration
	var lastAt time.Time // zero until the first tick with a reading
	for {
		var now time.Time
		select {
		case <-quit:
			return
		case now = <-tick:
		}
		used, ok := cpu()
		if !ok {
			continue
		}
		if !lastAt.IsZero() && now.After(lastAt) {
			cores := float64(used-last) / float64(now.Sub(lastAt))
			if one, changed := g.next(cores); changed {
				set(one)
				log.Debug("procs: parallelism follows the load", "one_p", one, "cores", cores)
			}
		}
		last, lastAt = used, now
	}
}
