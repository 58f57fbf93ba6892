package server

import (
	"testing"
	"time"
)

// The election timeout follows tickTime (a frozen leader is replaced
// within a fraction of a tick), but never drops below minElectionTimeout,
// where a loaded machine's scheduling delay would start false elections.
func TestElectionTimeout(t *testing.T) {
	for _, tc := range []struct {
		tickTime, want time.Duration
	}{
		{3000 * time.Millisecond, 480 * time.Millisecond},
		{2000 * time.Millisecond, 320 * time.Millisecond},
		{500 * time.Millisecond, 300 * time.Millisecond},
		{200 * time.Millisecond, 300 * time.Millisecond},
		{10 * time.Millisecond, 300 * time.Millisecond},
	} {
		if got := electionTimeout(tc.tickTime); got != tc.want {
			t.Errorf("tickTime %v: election timeout %v, want %v", tc.tickTime, got, tc.want)
		}
		if n := electionTicks(tc.tickTime); n < minElectionTicks {
			t.Errorf("tickTime %v: %d election ticks, want at least %d", tc.tickTime, n, minElectionTicks)
		}
	}
}
