//go:build simmutate

package sim

import (
	"testing"

	"github.com/zoohq/zoo/internal/replica"
)

// TestMutations proves the simulator bites: with each defect planted in
// the replica (build tag simmutate), some seed among the first
// maxMutationSeeds must fail. Run: go test -tags simmutate ./internal/sim
// -run TestMutations -v; it reports how many seeds each took.
func TestMutations(t *testing.T) {
	const maxMutationSeeds = 300
	for _, tc := range []struct {
		name string
		m    replica.Mutation
	}{
		{"ack before fsync", replica.MutAckBeforeFsync},
		{"no gap rule", replica.MutNoGapRule},
		{"apply out of order", replica.MutApplyOutOfOrder},
		{"sync skips the ReadIndex wait", replica.MutSyncSkipsReadIndex},
		{"expiry applied on one member only", replica.MutExpiryOnOneMember},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replica.SetMutation(tc.m, true)
			defer replica.SetMutation(tc.m, false)
			for seed := uint64(1); seed <= maxMutationSeeds; seed++ {
				if res := Run(Options{Seed: seed}); len(res.Failures) > 0 {
					t.Logf("caught at seed %d (the %d. seed run): %s", seed, seed, res.Failures[0])
					return
				}
			}
			t.Errorf("no seed among the first %d caught the mutation", maxMutationSeeds)
		})
	}
}
