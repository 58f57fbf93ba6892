package sim

import (
	"flag"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "run only this seed, with its trace")
	seedsFlag = flag.Int("seeds", 0, "how many seeds TestSeeds runs (default: 1000, or 80 under -race)")
	firstFlag = flag.Uint64("first", 1, "the first seed TestSeeds runs")
	goOnFlag  = flag.Bool("keepgoing", false, "TestSeeds goes on past a failing seed and lists every one (for long runs)")
)

// defaultSeeds is TestSeeds' seed count: ≥1,000 in a plain go test, and
// what fits in about two minutes under -race.
func defaultSeeds() int {
	if raceEnabled {
		return 80
	}
	return 1000
}

// TestSeeds runs seeds and fails with the trace of the first that breaks
// a property. -seed=N reruns one seed with its trace; -seeds=N runs more
// (a long mode: -seeds=100000 -timeout=0).
func TestSeeds(t *testing.T) {
	if *seedFlag != 0 {
		res := Run(Options{Seed: *seedFlag, Trace: true})
		if testing.Verbose() {
			for _, l := range res.Trace {
				t.Log(l)
			}
		}
		if len(res.Failures) > 0 {
			t.Fatal(res.Report())
		}
		t.Logf("seed %d passed: %d ops, %d faults, %d simulated ms", res.Seed, res.Ops, res.Faults, res.SimMs)
		return
	}
	n := *seedsFlag
	if n == 0 {
		n = defaultSeeds()
	}
	if testing.Short() {
		n = min(n, 20)
	}
	start := time.Now()
	var simMs int64
	var ops, faults int
	var failed []uint64
	for seed := *firstFlag; seed < *firstFlag+uint64(n); seed++ {
		res := Run(Options{Seed: seed})
		simMs += res.SimMs
		ops += res.Ops
		faults += res.Faults
		if len(res.Failures) > 0 {
			if *goOnFlag {
				failed = append(failed, seed)
				t.Errorf("seed %d failed: %s", seed, res.Failures[0])
				continue
			}
			// Again with the trace: the same seed fails the same way.
			t.Fatal(Run(Options{Seed: seed, Trace: true}).Report())
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d seeds failed: %v", len(failed), n, failed)
	}
	wall := time.Since(start)
	t.Logf("%d seeds in %v: %.1f seeds/s, %.0f simulated hours per wall hour, %d ops, %d faults",
		n, wall.Round(time.Millisecond), float64(n)/wall.Seconds(),
		float64(simMs)/float64(wall.Milliseconds()), ops, faults)
}

// TestRotLogEnd runs the RotLogEnd fault profile: every crash puts bit rot
// among the last records of the member's last log segment. Each such
// member must refuse to start (and is then replaced) or start with what it
// acknowledged; every check holds. TestMutations shows the profile catches
// a log that cuts such rot off as a torn write.
func TestRotLogEnd(t *testing.T) {
	n := max(defaultSeeds()/8, 10)
	if *seedsFlag != 0 {
		n = *seedsFlag // a long run: -run TestRotLogEnd -seeds N [-first S]
	}
	if testing.Short() {
		n = min(n, 10)
	}
	for seed := *firstFlag; seed < *firstFlag+uint64(n); seed++ {
		if res := Run(Options{Seed: seed, RotLogEnd: true}); len(res.Failures) > 0 {
			t.Fatal(Run(Options{Seed: seed, RotLogEnd: true, Trace: true}).Report())
		}
	}
}

// TestDeterminism: the same seed gives the same history, bit for bit.
func TestDeterminism(t *testing.T) {
	for _, seed := range []uint64{1, 7, 42} {
		a, b := Run(Options{Seed: seed}), Run(Options{Seed: seed})
		if a.Hash != b.Hash {
			t.Errorf("seed %d: two runs' histories hash to %x and %x", seed, a.Hash, b.Hash)
		}
	}
	if Run(Options{Seed: 1}).Hash == Run(Options{Seed: 2}).Hash {
		t.Error("seeds 1 and 2 gave the same history: the seed drives nothing")
	}
}

// TestRegressions reruns the seeds that found real bugs, each fixed (in
// Zoo, or in the simulator's model: marked sim).
func TestRegressions(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		bug  string
	}{
		{85, "wal: a torn lazy commit at a segment's end, after a cut, made the log corrupt for good"},
		{90, "replica: a lazy commit lost in a crash left the HardState's commit below the snapshot: raft panicked at start"},
		{590, "wal: bit rot in the last segment's fsynced records was cut off as a torn tail: the member forgot entries it had acknowledged"},
		{89, "server: a member that took a leader's snapshot did not track its sessions, and refused a session moving to it as expired"},
		{452, "server: a former leader still marked a session closing, and refused it moving there as expired while it lived on"},
		{101523, "peer: a member restarted with a log older than the reconfig that added the leader (m4) refused the leader's messages: it never caught up"},
		{106795, "peer: the same, a member restarted at zxid 2 that never learned of m4, which then led; its clients read stale data"},
		{111040, "peer: a member restarted from a log holding only its bootstrap (zxid 1) was treated as empty and refused the leader (m4) its log does not name, so the ensemble {1,2,4} never had a quorum again"},
		{6768, "replica: once members admit any server, a leader that a reconfig removed led on outside the membership, dropping every proposal (now it lingers as a learner and hands over: linger.go)"},
		{4391, "replica: a member removed while up (it lingered), wiped and added back at once stopped with ErrLostLog: the leader kept its old progress"},
		{137, "replica: a member removed while down lingered too; wiped and added back, it stopped with ErrLostLog"},
		{8557, "sim: convergence was judged while the leader removed TTL nodes late (its clock had been set back): now the run settles first"},
		{44124, "wal: format v1 took bit rot in m3's first segment (after a crash that tore nothing) for a torn tail and cut an entry m3 had acknowledged; with format v2 m3 refuses to start and is replaced"},
		{11061, "sim: the operator's repair wiped a member that had since started, without stopping it: its client connections were left open"},
	} {
		if res := Run(Options{Seed: tc.seed}); len(res.Failures) > 0 {
			t.Errorf("seed %d (%s) fails again:\n%s", tc.seed, tc.bug, Run(Options{Seed: tc.seed, Trace: true}).Report())
		}
	}
}
