package crashtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// The randomized schedules run only when asked: they are long.
var (
	chaosSeed      = flag.Uint64("chaos.seed", 0, "first seed of TestRandomSchedules (0: from the clock); schedule i uses seed+i")
	chaosSchedules = flag.Int("chaos.schedules", 0, "how many random fault schedules TestRandomSchedules runs (0: skip, unless ZOO_CHAOS=1)")
	chaosDuration  = flag.Duration("chaos.duration", 30*time.Second, "how long each schedule injects faults")
)

const (
	chaosDiskSize = "256m"           // each member's tmpfs dataDir
	chaosSegKB    = 64               // preAllocSize: WAL segments of 64 KiB, so that the load rolls over to a new one every few hundred writes
	chaosRollWait = 20 * time.Second // longest a full disk waits for the member to roll over to a new segment
	chaosMaxHold  = 3 * time.Second  // longest a fault lasts
	chaosMaxGap   = 1 * time.Second  // longest calm between two faults
	chaosWriters  = 2                // sequential-create writers, besides the linearizability clients
	chaosRunHint  = "go test ./internal/crashtest -run TestRandomSchedules -chaos.schedules=N [-chaos.seed=S] [-chaos.duration=30s] -timeout 0 (or ZOO_CHAOS=1)"
)

// Ref: issue 13, "Deterministic simulation": randomized multi-process
// crash schedules. Each schedule starts a linked 3-member ensemble and,
// under a create load and the linearizability clients' setData/sync+get
// load, applies seeded random faults to random members: kill -9 and
// restart, SIGSTOP and SIGCONT, isolation from both peers, a one-way cut
// of one peer link, and (as root, on a tmpfs dataDir) a full disk, held
// for a random time or until the member fails to roll its log over to a
// new segment (small segments, preAllocSize=64, make that frequent). Then it
// heals everything and checks that writes resume, that every acknowledged
// create is on every member, that the members' digests agree, and that
// the history is linearizable.
func TestRandomSchedules(t *testing.T) {
	n := *chaosSchedules
	if n == 0 && os.Getenv("ZOO_CHAOS") == "1" {
		n = 3
	}
	if n <= 0 || testing.Short() {
		t.Skip("long randomized fault schedules; run with: " + chaosRunHint)
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	tally := map[string]int{}
	failed, rolled := 0, 0
	for i := range n {
		s := seed + uint64(i)
		if !t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { runSchedule(t, s, *chaosDuration, tally, &rolled) }) {
			failed++
		}
	}
	var kinds []string
	total := 0
	for k, c := range tally {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, c))
		total += c
	}
	sort.Strings(kinds)
	t.Logf("%d schedules from seed %d (%d failed), %d faults applied (%s); %d full disks made a member fail to roll over to a new log segment",
		n, seed, failed, total, strings.Join(kinds, ", "), rolled)
}

// schedule is one seeded run of faults against one ensemble.
type schedule struct {
	t       *testing.T
	rng     *rand.Rand
	ms      []*member
	pn      *peerNet
	disk    bool // every dataDir is on a tmpfs: the disk-full fault is possible
	noMount bool // a mount failed: no disk fills, which would fill a shared disk
	applied []string
	tally   map[string]int
	rolled  *int // full disks that made a member fail a roll-over
}

// fault is one injected failure and its repair.
type fault struct {
	kind, name     string
	inject, repair func()
}

func runSchedule(t *testing.T, seed uint64, dur time.Duration, tally map[string]int, rolled *int) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("rerun: go test ./internal/crashtest -run 'TestRandomSchedules' -chaos.seed=%d -chaos.schedules=1 -chaos.duration=%v -timeout 0 -v", seed, dur)
		}
	})
	sc := &schedule{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tally: tally, rolled: rolled}
	sc.pn = &peerNet{links: map[[2]int]*zktest.Link{}}
	sc.ms = newEnsembleIn(t, 3, 0, sc.pn, sc.dataDir, fmt.Sprintf("preAllocSize=%d", chaosSegKB))
	sc.disk = !sc.noMount
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range sc.ms {
				t.Logf("server %d's log (start %d), last lines:\n%s", m.id, m.starts, m.logTail())
			}
		}
	})
	if !sc.disk {
		t.Log("disk-full fault left out: cannot mount a tmpfs (needs root)")
	}
	ms := sc.ms
	leaderOf(t, ms)
	setupKeys(t, ms)
	c := connect(t, connectString(ms), writerTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, _, err := c.Create(ctx, "/ens", nil, zk.Persistent, acl)
	cancel()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}

	h := &history{start: time.Now(), acked: make([]int, linClients+1)}
	var acked ackLog
	ctx, cancel = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range linClients {
		lc := &linClient{id: i, ms: ms, h: h, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		wg.Go(func() { lc.run(ctx, t) })
	}
	for range chaosWriters {
		wg.Go(func() { chaosWrite(ctx, ms, &acked) })
	}
	stop := func() {
		cancel()
		wg.Wait()
	}
	defer stop()

	t.Logf("seed %d: faults for %v", seed, dur)
	for end := time.Now().Add(dur); time.Now().Before(end); {
		sc.step()
	}
	// Everything is healed: each step repairs what it injected.
	sc.checkAlive()
	leaderOf(t, ms)
	acked.more(t, 20)
	h.everyClient(t, ms, 3)
	stop()
	t.Logf("seed %d: %d faults applied: %s", seed, len(sc.applied), strings.Join(sc.applied, "; "))
	verifyEnsemble(t, ms, acked.all())
	checkDigests(t, ms)
	finalReads(t, ms, h)
	checkHistory(t, h)
}

// dataDir makes a member's directory: a tmpfs of its own when the test
// may mount one, so that filling it fills only that member's disk.
func (sc *schedule) dataDir() string {
	dir := sc.t.TempDir()
	if sc.noMount {
		return dir
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+chaosDiskSize, "tmpfs", dir).CombinedOutput()
	if err != nil {
		sc.t.Logf("mount tmpfs on %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
		sc.noMount = true
		return dir
	}
	sc.t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			sc.t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// step applies one fault to a random member, sometimes a second one to
// another member meanwhile (which may cost the quorum), holds them for a
// random time, repairs them, and waits a random calm.
func (sc *schedule) step() {
	order := sc.rng.Perm(len(sc.ms))
	faults := []fault{sc.pick(sc.ms[order[0]])}
	if sc.rng.IntN(4) == 0 {
		faults = append(faults, sc.pick(sc.ms[order[1]]))
	}
	hold := time.Duration(sc.rng.Int64N(int64(chaosMaxHold)))
	gap := time.Duration(sc.rng.Int64N(int64(chaosMaxGap)))
	for _, f := range faults {
		sc.checkAlive()
		f.inject()
		sc.applied = append(sc.applied, f.name)
		sc.tally[f.kind]++
		sc.t.Logf("fault: %s, for %v", f.name, hold.Round(time.Millisecond))
	}
	time.Sleep(hold) // the fault's duration is the schedule, not a wait for a condition
	for i := len(faults) - 1; i >= 0; i-- {
		faults[i].repair()
	}
	time.Sleep(gap) // the schedule's calm between faults
}

// checkAlive restarts, and reports, a member that exited on its own: the
// faults never make one do so, but a full disk may (which is allowed,
// and restarted in the disk fault's repair).
func (sc *schedule) checkAlive() {
	for _, m := range sc.ms {
		if m.cmd == nil {
			continue
		}
		select {
		case <-m.exited:
			if log := m.logTail(); strings.Contains(log, "no space left on device") {
				sc.t.Logf("server %d exited after its disk filled up: %v; restarting it", m.id, m.cmd.ProcessState)
			} else {
				sc.t.Errorf("server %d exited on its own: %v\n%s", m.id, m.cmd.ProcessState, log)
			}
			m.cmd = nil
			m.start()
		default:
		}
	}
}

// pick chooses a random fault for m.
func (sc *schedule) pick(m *member) fault {
	kinds := []string{"kill -9", "SIGSTOP", "isolate", "cut one way"}
	if sc.disk {
		kinds = append(kinds, "disk full", "disk full at a roll-over")
	}
	kind := kinds[sc.rng.IntN(len(kinds))]
	f := fault{kind: kind, name: fmt.Sprintf("%s server %d", kind, m.id)}
	switch kind {
	case "kill -9":
		f.inject, f.repair = m.kill, m.start
	case "SIGSTOP":
		f.inject, f.repair = m.pause, m.resume
	case "isolate":
		f.inject = func() { sc.pn.isolate(m.id, true) }
		f.repair = func() { sc.pn.isolate(m.id, false) }
	case "cut one way":
		// Only the connections m opens to the other member go: a peer
		// connection of a pair is dialed by the larger id, so this cuts
		// the pair's link when m is the larger, and only what the
		// smaller one dials (snapshot streams) otherwise.
		others := without(sc.ms, m)
		o := others[sc.rng.IntN(len(others))]
		l := sc.pn.links[[2]int{m.id, o.id}]
		f.name = fmt.Sprintf("cut one way %d->%d", m.id, o.id)
		f.inject = func() { l.SetCut(true) }
		f.repair = func() { l.SetCut(false) }
	case "disk full", "disk full at a roll-over":
		ballast := filepath.Join(m.dir, "ballast")
		var failedBefore int // roll-overs the member's current log reports failed
		f.inject = func() {
			failedBefore = rollOverFailures(m.logPath)
			sc.fill(ballast)
		}
		f.repair = func() {
			if kind == "disk full at a roll-over" {
				sc.waitRollOverFails(m, failedBefore)
			}
			if err := os.Remove(ballast); err != nil {
				sc.t.Errorf("remove ballast: %v", err)
			}
			select {
			case <-m.exited:
				sc.t.Logf("server %d exited on the full disk (%v); restarting it", m.id, m.cmd.ProcessState)
				m.cmd = nil
				m.start()
			default:
			}
		}
	}
	return f
}

// waitRollOverFails holds m's full disk until m reports that it could
// not start a new log segment (the WAL's cut, whose preallocation or
// header write fails with ENOSPC) more often than the before it had
// reported, or it exits (another write failed first), or chaosRollWait
// passes. It counts the hits in sc.rolled.
func (sc *schedule) waitRollOverFails(m *member, before int) {
	deadline := time.Now().Add(chaosRollWait)
	for time.Now().Before(deadline) {
		if rollOverFailures(m.logPath) > before {
			*sc.rolled++
			sc.t.Logf("server %d could not roll over to a new segment on its full disk", m.id)
			return
		}
		select {
		case <-m.exited:
			sc.t.Logf("server %d exited on its full disk before a roll-over", m.id)
			return
		default:
		}
		time.Sleep(50 * time.Millisecond) // polling the server's log for the failure
	}
	sc.t.Logf("server %d did not roll over within %v on its full disk", m.id, chaosRollWait)
}

// rollOverFailures counts the lines of the server log at path that say
// a new WAL segment could not be made for want of space.
func rollOverFailures(path string) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "wal: cut segment") && strings.Contains(line, "no space left on device") {
			n++
		}
	}
	return n
}

// fill writes path until the filesystem is full.
func (sc *schedule) fill(path string) {
	f, err := os.Create(path)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return
		}
		sc.t.Fatalf("ballast: %v", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				sc.t.Fatalf("ballast: %v", err)
			}
			return
		}
	}
}

// chaosWrite creates sequential znodes under /ens, recording the
// acknowledged ones, until ctx ends; it opens a new session when its
// session ends, as an application would.
func chaosWrite(ctx context.Context, ms []*member, acked *ackLog) {
	var c *zk.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for ctx.Err() == nil {
		if c == nil {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			var err error
			c, err = zk.Connect(cctx, connectString(ms), zk.WithSessionTimeout(ensembleSession))
			cancel()
			if err != nil {
				c = nil
				continue
			}
		}
		opCtx, cancel := context.WithTimeout(ctx, linOpWait)
		_ = acked.writer(c)(opCtx) // failures during faults are expected
		cancel()
		if c.Err() != nil {
			_ = c.Close()
			c = nil
		}
	}
}

// checkDigests compares the members' "hash" digests: at every zxid two
// members both recorded, the trees must be the same.
func checkDigests(t *testing.T, ms []*member) {
	t.Helper()
	byZxid := map[string]map[int]string{}
	for _, m := range ms {
		out, err := fourLetterWord(m.addr, "hash")
		if err != nil {
			t.Fatalf("hash on server %d: %v", m.id, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			z, d, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			if byZxid[z] == nil {
				byZxid[z] = map[int]string{}
			}
			byZxid[z][m.id] = d
		}
	}
	shared := 0
	for z, ds := range byZxid {
		if len(ds) < 2 {
			continue
		}
		shared++
		var first string
		for _, d := range ds {
			if first == "" {
				first = d
			} else if d != first {
				t.Errorf("zxid %s: members' digests differ: %v", z, ds)
				break
			}
		}
	}
	t.Logf("digests: %d zxids recorded by two or more members agree", shared)
}

// fourLetterWord sends cmd to addr and returns the answer.
func fourLetterWord(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}
