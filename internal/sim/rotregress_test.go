package sim

import "testing"

// TestRotLogEndRegressions reruns the RotLogEnd seeds that found real
// bugs, each fixed.
func TestRotLogEndRegressions(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		bug  string
	}{
		{1700, "wal: format v1 took bit rot near the end of m3's last segment (at 2942, after a crash at t=583) for a torn tail and cut it: m3 lost entries it had acknowledged; v2's header checksum and end mark tell it apart"},
	} {
		if res := Run(Options{Seed: tc.seed, RotLogEnd: true}); len(res.Failures) > 0 {
			t.Errorf("seed %d (%s) fails again:\n%s", tc.seed, tc.bug, Run(Options{Seed: tc.seed, RotLogEnd: true, Trace: true}).Report())
		}
	}
}
