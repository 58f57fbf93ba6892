package main

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/zoohq/zoo/internal/config"
)

// The server's collector setting (issue 14). At Go's default GOGC=100 the
// heap may grow to twice the live heap before a collection, and RSS
// follows the heap goal: a 1M-znode tree of ≈250 MB live held ≈460 MiB of
// RSS. The tree is large pointer-free chunks (internal/tree), which the
// collector marks without scanning (a full collection of a 3M-znode tree
// takes ≈10 ms of CPU in BenchmarkPrepApplyScale), so the server can
// afford to collect more often. Zoo therefore gives the
// heap a headroom of a quarter of the live heap, but never less than
// gcMinHeadroom: a small server keeps Go's default, so its collections do
// not run every few requests, and a large one keeps RSS within ≈1.25x its
// live heap.
//
// The tuner reads the live heap every gcTunePeriod. A restart loads 1M
// znodes in about a second, so a tuner that looked once a second first
// looked when the load was over: the load ran at GOGC=100 and its heap
// peaked at 1.3x the live heap (332 MB against 250), the start's RSS
// peak at 344-354 MiB. Looking every 100 ms, it follows the load
// (329-332 MiB); a read of one runtime metric costs microseconds.
//
// The headroom is memory the heap keeps for the next collection's garbage,
// and RSS keeps it while the server is idle: 1M znodes created in a burst
// left RSS at 331 MiB against 260 MiB once freed. So when the live heap
// has grown by gcMinHeadroom since the last release and the program then
// allocates under gcQuietAlloc per gcTunePeriod for gcQuietTicks periods
// (a burst of writes is over), the tuner hands the free memory back with
// one debug.FreeOSMemory: a collection and a scavenge, about 0.1 s of CPU
// at 1M znodes, once per burst.
const (
	gcMinHeadroom  = 64 << 20 // bytes of garbage allowed between collections, at least
	gcMinPercent   = 25
	gcMaxPercent   = 100 // Go's default
	gcTunePeriod   = 100 * time.Millisecond
	gcTuneStep     = 5       // percentage points: smaller changes are not worth a SetGCPercent
	gcQuietAlloc   = 1 << 20 // bytes allocated in a period that still count as quiet
	gcQuietTicks   = 3
	liveHeapMetric = "/gc/heap/live:bytes"
	allocsMetric   = "/gc/heap/allocs:bytes"
)

// gcPercentFor is the GOGC that gives a live heap of live bytes its
// headroom: max(live/4, gcMinHeadroom), as a percentage of live, within
// [gcMinPercent, gcMaxPercent].
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	p := uint64(gcMinHeadroom) * 100 / live
	return int(min(max(p, gcMinPercent), gcMaxPercent))
}

// startGC applies the collector setting: GOGC or GOMEMLIMIT in the
// environment win (the runtime has read them), then zoo.cfg's gcPercent,
// else a tuner that follows the live heap. It returns the function that
// stops the tuner.
func startGC(log *slog.Logger, cfg *config.Config, getenv func(string) string) (stop func()) {
	if v, w := getenv("GOGC"), getenv("GOMEMLIMIT"); v != "" || w != "" {
		log.Info("gc: GOGC/GOMEMLIMIT set in the environment: Zoo leaves the collector as they say", "GOGC", v, "GOMEMLIMIT", w)
		return func() {}
	}
	if cfg.GCPercent > 0 {
		debug.SetGCPercent(cfg.GCPercent)
		log.Info("gc: fixed by gcPercent", "percent", cfg.GCPercent, "at", cfg.Pos("gcPercent").String())
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tuneGC(log, quit, debug.SetGCPercent, debug.FreeOSMemory)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// tuneGC sets the collector's percentage from the live heap every
// gcTunePeriod, and frees memory after a burst, until quit closes. set is
// debug.SetGCPercent and free debug.FreeOSMemory.
func tuneGC(log *slog.Logger, quit <-chan struct{}, set func(int) int, free func()) {
	samples := []metrics.Sample{{Name: liveHeapMetric}, {Name: allocsMetric}}
	cur := gcMaxPercent
	var burst burstRelease
	t := time.NewTicker(gcTunePeriod)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		metrics.Read(samples)
		for _, s := range samples {
			if s.Value.Kind() != metrics.KindUint64 {
				log.Warn("gc: the runtime does not report a metric the tuner needs; keeping GOGC", "metric", s.Name)
				return
			}
		}
		live, allocs := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		if p := gcPercentFor(live); retune(cur, p) {
			set(p)
			log.Debug("gc: percent follows the live heap", "live_bytes", live, "percent", p)
			cur = p
		}
		if burst.due(live, allocs) {
			log.Debug("gc: a burst that grew the heap is over: returning free memory to the OS", "live_bytes", live)
			free()
		}
	}
}

// burstRelease decides, one tuner period at a time, when a burst that
// grew the live heap by gcMinHeadroom is over (gcQuietTicks periods with
// under gcQuietAlloc allocated each) and its free memory is worth giving
// back. It belongs to the tuner's goroutine.
type burstRelease struct {
	base   uint64 // the live heap at the last release, or its low since
	allocs uint64 // bytes allocated, as of the last period
	quiet  int    // quiet periods in a row
}

// due takes the live heap and the bytes allocated so far, and reports
// whether to release now.
func (b *burstRelease) due(live, allocs uint64) bool {
	if allocs-b.allocs < gcQuietAlloc {
		b.quiet++
	} else {
		b.quiet = 0
	}
	b.allocs = allocs
	b.base = min(b.base, live)
	if b.quiet < gcQuietTicks || live < b.base+gcMinHeadroom {
		return false
	}
	b.base = live
	return true
}

// retune reports whether moving from percent cur to p is worth it.
func retune(cur, p int) bool {
	if p == cur {
		return false
	}
	return p == gcMinPercent || p == gcMaxPercent || p-cur >= gcTuneStep || cur-p >= gcTuneStep
}
