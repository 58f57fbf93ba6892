package main

import (
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/zoohq/zoo/internal/config"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{1 << 20, 100},   // a small server keeps Go's default
		{64 << 20, 100},  // 64 MiB of headroom is 100% of 64 MiB
		{128 << 20, 50},  // still 64 MiB of headroom
		{256 << 20, 25},  // a quarter of the live heap from here on
		{2500 << 20, 25}, // 10M znodes: RSS ≈1.25x live, not 2x
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func TestRetune(t *testing.T) {
	for _, c := range []struct {
		cur, p int
		want   bool
	}{
		{100, 100, false},
		{100, 98, false}, // not worth a stop-the-world
		{100, 95, true},
		{30, 25, true},
		{27, 25, true}, // the bound is reached exactly
		{50, 53, false},
	} {
		if got := retune(c.cur, c.p); got != c.want {
			t.Errorf("retune(%d, %d) = %v, want %v", c.cur, c.p, got, c.want)
		}
	}
}

// TestStartGCOverrides: GOGC in the environment wins over gcPercent, and
// gcPercent fixes the setting without a tuner.
func TestStartGCOverrides(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	log := slog.New(slog.DiscardHandler)
	cfg := &config.Config{GCPercent: 40}

	env := map[string]string{"GOGC": "200"}
	startGC(log, cfg, func(k string) string { return env[k] })()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, the percent became %d; want it left at 100", got)
	}

	startGC(log, cfg, func(string) string { return "" })()
	if got := debug.SetGCPercent(100); got != 40 {
		t.Errorf("with gcPercent=40, the percent is %d", got)
	}

	// The tuner starts and stops.
	startGC(log, &config.Config{}, func(string) string { return "" })()
}

// A burst that grows the live heap by the minimum headroom is followed,
// once it has been quiet for gcQuietTicks periods, by one release; a
// burst that grows it less, or one still allocating, by none.
func TestBurstRelease(t *testing.T) {
	const mib = 1 << 20
	var b burstRelease
	var allocs uint64
	step := func(live, alloc uint64) bool {
		allocs += alloc
		return b.due(live, allocs)
	}
	// Start: a small heap, quiet. Nothing grew: no release.
	for range 2 * gcQuietTicks {
		if step(10*mib, 0) {
			t.Fatal("released with nothing grown")
		}
	}
	// A fill: the live heap grows by 250 MiB while allocating fast.
	for i := range 50 {
		if step(10*mib+uint64(i)*5*mib, 30*mib) {
			t.Fatalf("released during the burst, at period %d", i)
		}
	}
	// It ends: released once, after gcQuietTicks quiet periods.
	var at []int
	for i := range 5 * gcQuietTicks {
		if step(260*mib, mib/2) {
			at = append(at, i)
		}
	}
	if len(at) != 1 || at[0] != gcQuietTicks-1 {
		t.Fatalf("released at quiet periods %v; want once, at %d", at, gcQuietTicks-1)
	}
	// A smaller burst (32 MiB more live) is not worth a release.
	for range 10 {
		step(292*mib, 30*mib)
	}
	for range 5 * gcQuietTicks {
		if step(292*mib, 0) {
			t.Fatal("released after a burst that grew the heap by less than the minimum headroom")
		}
	}
	// Deletes shrink the heap; growing back by the headroom from the low
	// is a burst again.
	step(100*mib, 0)
	for range 10 {
		step(170*mib, 30*mib)
	}
	released := false
	for range 5 * gcQuietTicks {
		released = step(170*mib, 0) || released
	}
	if !released {
		t.Fatal("no release after the heap grew back by the headroom from its low")
	}
}
