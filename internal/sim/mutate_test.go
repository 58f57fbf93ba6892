//go:build simmutate

package sim

import (
	"cmp"
	"testing"

	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/wal"
	"github.com/zoohq/zoo/internal/watch"
)

// TestMutations proves the simulator bites: with each defect planted in
// the replica, the log, the server's request path or its watch registry (build tag simmutate), some seed among the first
// maxMutationSeeds must fail. Run: go test -tags simmutate ./internal/sim
// -run TestMutations -v; it reports how many seeds each took.
func TestMutations(t *testing.T) {
	const maxMutationSeeds = 300
	mut := func(m replica.Mutation) func(bool) { return func(on bool) { replica.SetMutation(m, on) } }
	srv := func(m server.Mutation) func(bool) { return func(on bool) { server.SetMutation(m, on) } }
	wat := func(m watch.Mutation) func(bool) { return func(on bool) { watch.SetMutation(m, on) } }
	for _, tc := range []struct {
		name  string
		set   func(on bool)
		seeds uint64  // 0: maxMutationSeeds
		opt   Options // the fault profile (Seed is set per run)
	}{
		{"ack before fsync", mut(replica.MutAckBeforeFsync), 0, Options{}},
		{"no gap rule", mut(replica.MutNoGapRule), 0, Options{}},
		{"apply out of order", mut(replica.MutApplyOutOfOrder), 0, Options{}},
		{"sync skips the ReadIndex wait", mut(replica.MutSyncSkipsReadIndex), 0, Options{}},
		{"expiry applied on one member only", mut(replica.MutExpiryOnOneMember), 0, Options{}},
		// Rare in the default mix (one seed in several thousand): it needs
		// bit rot among the last records of a member's last log segment,
		// which the RotLogEnd profile puts there at every crash.
		{"bit rot at the log's end cut as a torn tail", wal.SetTornAlwaysMutation, 0, Options{RotLogEnd: true}},
		// In internal/server's request path, which the members run.
		{"watch events queued after the write's reply", srv(server.MutEventsAfterReply), 0, Options{}},
		{"waiting reads answered before the write's reply", srv(server.MutReadsBeforeWrite), 0, Options{}},
		{"getData sets its watch on a missing node", srv(server.MutWatchOnMissingNode), 0, Options{}},
		{"setWatches forgets the changes since the client's last zxid", srv(server.MutSetWatchesForgetsChanges), 0, Options{}},
		{"the connection of an ended session kept open", srv(server.MutEndedKeepsConn), 0, Options{}},
		{"watch events sent to watchers that may not read the node", srv(server.MutEventsIgnoreACL), 0, Options{}},
		{"getData answered without the READ check", srv(server.MutGetDataSkipsACL), 0, Options{}},
		// In internal/watch's registry, which the request path fires.
		{"a child watch fires on setData", wat(watch.MutChildFiresOnSetData), 0, Options{}},
		{"a persistent watch removed after its first event", wat(watch.MutPersistentOnce), 0, Options{}},
		{"a recursive watch misses grandchildren", wat(watch.MutRecursiveSkipsGrandchildren), 0, Options{}},
		{"setWatches drops child watches", wat(watch.MutSetWatchesDropsChildWatches), 0, Options{}},
		{"setWatches drops persistent watches", wat(watch.MutSetWatchesDropsPersistent), 0, Options{}},
		{"removeWatches of one type takes a persistent watch whole", wat(watch.MutRemoveWholePersistent), 0, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set(true)
			defer tc.set(false)
			n := cmp.Or(tc.seeds, maxMutationSeeds)
			for seed := uint64(1); seed <= n; seed++ {
				o := tc.opt
				o.Seed = seed
				res := Run(o)
				if len(res.Failures) == 0 {
					continue
				}
				// A seed that fails without the mutation too proves
				// nothing about it.
				tc.set(false)
				base := Run(o)
				tc.set(true)
				if len(base.Failures) > 0 {
					t.Logf("seed %d fails without the mutation too (%s); not counted", seed, base.Failures[0])
					continue
				}
				t.Logf("caught at seed %d (the %d. seed run): %s", seed, seed, res.Failures[0])
				return
			}
			t.Errorf("no seed among the first %d caught the mutation", n)
		})
	}
}
