package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zoohq/zoo/zk"
)

// The linearizability test's workload.
const (
	linClients  = 5
	linKeys     = 3
	linOpWait   = 8 * time.Second  // a call's context: beyond a failover
	linCheckFor = 20 * time.Second // porcupine's budget
)

func linKey(k int) string { return fmt.Sprintf("/lin/k%d", k) }

// kvInput is one call on a znode: a setData (write) with an expected
// version (-1 for any), or a read, which is sync(path) then getData(path).
type kvInput struct {
	key     int
	write   bool
	value   string
	version int32
}

// kvStatus is how a write ended.
type kvStatus int

const (
	kvOK         kvStatus = iota // applied, with the version in the output
	kvBadVersion                 // refused: the version did not match
	kvUnknown                    // connection loss, timeout: it may apply, at any time after its call
	kvFailed                     // refused by the server with another code: not applied
)

// kvOutput is a read's value and version, or a write's status and, if it
// applied, the new version.
type kvOutput struct {
	status  kvStatus
	value   string
	version int32
	err     string // for the visualization
}

// kvState is one znode: its data and its data version.
type kvState struct {
	value   string
	version int32
}

// kvModel is ZooKeeper's data model for setData/getData on existing
// znodes, one partition per znode.
// Ref: programmer's guide, "ZooKeeper Guarantees" and "Sync": writes are
// linearizable; a read that follows a sync by the same client sees every
// write that completed before the sync was called.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := make([][]porcupine.Operation, linKeys)
		for _, op := range history {
			k := op.Input.(kvInput).key
			byKey[k] = append(byKey[k], op)
		}
		return byKey
	},
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(kvState), input.(kvInput), output.(kvOutput)
		if !in.write {
			return out.value == st.value && out.version == st.version, st
		}
		match := in.version == -1 || in.version == st.version
		next := kvState{value: in.value, version: st.version + 1}
		switch out.status {
		case kvOK:
			return match && out.version == next.version, next
		case kvBadVersion:
			return !match, st
		case kvUnknown:
			// Applied here if it could apply; a write that never
			// applied is linearized after everything else, which its
			// endless return time allows.
			if match {
				return true, next
			}
			return true, st
		default: // kvFailed
			return true, st
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		if !in.write {
			return fmt.Sprintf("get k%d -> %q v%d", in.key, out.value, out.version)
		}
		res := map[kvStatus]string{kvOK: fmt.Sprintf("ok v%d", out.version), kvBadVersion: "BadVersion",
			kvUnknown: "unknown: " + out.err, kvFailed: "failed: " + out.err}[out.status]
		return fmt.Sprintf("set k%d %q v%d -> %s", in.key, in.value, in.version, res)
	},
	DescribeState: func(state any) string {
		st := state.(kvState)
		return fmt.Sprintf("%q v%d", st.value, st.version)
	},
}

// history records operations with times from one monotonic clock.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	// acked counts the operations that completed, per client, for the
	// driver to see that every client gets through after a fault.
	acked []int
	// dropped counts the failed reads, left out of the history.
	dropped int
}

// summary counts the operations by kind and outcome.
func (h *history) summary() string {
	var reads int
	writes := map[kvStatus]int{}
	for _, op := range h.ops {
		if op.Input.(kvInput).write {
			writes[op.Output.(kvOutput).status]++
		} else {
			reads++
		}
	}
	return fmt.Sprintf("%d reads (sync+get), writes: %d ok, %d BadVersion, %d of unknown outcome, %d failed; %d failed reads left out",
		reads, writes[kvOK], writes[kvBadVersion], writes[kvUnknown], writes[kvFailed], h.dropped)
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

func (h *history) add(op porcupine.Operation, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	if ok {
		h.acked[op.ClientId]++
	}
}

func (h *history) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropped++
}

func (h *history) ackedCounts() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.acked...)
}

// everyClient waits until every client has completed n more operations
// than at the moment of the call: all of them got through a fault.
func (h *history) everyClient(t *testing.T, ms []*member, n int) {
	t.Helper()
	base := h.ackedCounts()
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := h.ackedCounts()
		done := true
		for i := range linClients {
			done = done && now[i] >= base[i]+n
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			dumpLogs(t, ms)
			t.Fatalf("clients' completed operations: %v; %d more each wanted (from %v)", now, n, base)
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
}

// linClient is one client of the workload. Its session may end (a long
// failover); it then opens another, as an application would.
type linClient struct {
	id      int
	ms      []*member
	h       *history
	rng     *rand.Rand
	c       *zk.Client
	version [linKeys]int32 // the version last seen of each key
	seq     int
}

func (lc *linClient) run(ctx context.Context, t *testing.T) {
	defer func() {
		if lc.c != nil {
			_ = lc.c.Close()
		}
	}()
	for ctx.Err() == nil {
		if lc.c == nil && !lc.reconnect(ctx, t) {
			return
		}
		key := lc.rng.IntN(linKeys)
		if lc.rng.IntN(2) == 0 {
			lc.read(ctx, key)
		} else {
			lc.write(ctx, key)
		}
		if err := lc.c.Err(); err != nil {
			t.Logf("client %d: session ended (%v); opening another", lc.id, err)
			_ = lc.c.Close()
			lc.c = nil
		}
	}
}

func (lc *linClient) reconnect(ctx context.Context, t *testing.T) bool {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := zk.Connect(cctx, connectString(lc.ms), zk.WithSessionTimeout(ensembleSession))
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("client %d: reconnect: %v", lc.id, err)
		}
		return false
	}
	lc.c = c
	return true
}

// write sets the key to a value no other write uses, at the version the
// client last saw, or at any version one time in four.
func (lc *linClient) write(ctx context.Context, key int) {
	lc.seq++
	in := kvInput{key: key, write: true, value: fmt.Sprintf("c%d-%d", lc.id, lc.seq), version: lc.version[key]}
	if lc.rng.IntN(4) == 0 {
		in.version = -1
	}
	opCtx, cancel := context.WithTimeout(ctx, linOpWait)
	defer cancel()
	call := lc.h.now()
	st, err := lc.c.Set(opCtx, linKey(key), []byte(in.value), in.version)
	ret := lc.h.now()
	var out kvOutput
	switch {
	case err == nil:
		out = kvOutput{status: kvOK, version: st.Version}
		lc.version[key] = st.Version
	case errors.Is(err, zk.ErrBadVersion):
		out = kvOutput{status: kvBadVersion}
	case maybeApplied(err):
		out = kvOutput{status: kvUnknown, err: err.Error()}
		ret = math.MaxInt64
	default:
		out = kvOutput{status: kvFailed, err: err.Error()}
	}
	lc.h.add(porcupine.Operation{ClientId: lc.id, Input: in, Call: call, Output: out, Return: ret},
		out.status <= kvBadVersion)
}

// maybeApplied reports whether a failed call may still have taken effect:
// the connection broke, the call timed out, or the session ended with the
// call queued or in flight.
func maybeApplied(err error) bool {
	for _, e := range []error{zk.ErrConnectionLoss, zk.ErrOperationTimeout, zk.ErrRequestTimeout,
		zk.ErrSessionExpired, zk.ErrSessionMoved, zk.ErrClosed, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// read is sync then getData, one operation from the sync's call to the
// get's return. A failed read observed nothing and is left out.
func (lc *linClient) read(ctx context.Context, key int) {
	opCtx, cancel := context.WithTimeout(ctx, linOpWait)
	defer cancel()
	call := lc.h.now()
	if err := lc.c.Sync(opCtx, linKey(key)); err != nil {
		lc.h.drop()
		return
	}
	data, st, err := lc.c.Get(opCtx, linKey(key))
	ret := lc.h.now()
	if err != nil {
		lc.h.drop()
		return
	}
	lc.version[key] = st.Version
	lc.h.add(porcupine.Operation{ClientId: lc.id, Input: kvInput{key: key},
		Call: call, Output: kvOutput{value: string(data), version: st.Version}, Return: ret}, true)
}

// Ref: issue "The ensemble": linearizability under faults, checked with
// porcupine. Five clients, spread over the three members, set three
// znodes with conditional (versioned) and unconditional setData and read
// them with sync + getData while the leader is, in turn, killed with
// SIGKILL and restarted, stopped with SIGSTOP and continued, and cut off
// from its peers and healed. At the end every member is read (sync +
// getData) too, so a member that did not catch up shows as a stale read.
// Ref: programmer's guide, "ZooKeeper Guarantees" (sequential consistency,
// single system image) and "Sync".
func TestEnsembleLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zoo server processes")
	}
	ms, pn := startLinkedEnsemble(t, 3)
	leaderOf(t, ms)
	setupKeys(t, ms)
	h := &history{start: time.Now(), acked: make([]int, linClients+1)}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range linClients {
		first := ms[i%len(ms)]
		c, _ := connectPinned(t, ms, first, ensembleSession)
		lc := &linClient{id: i, ms: ms, h: h, c: c, rng: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))}
		wg.Go(func() { lc.run(ctx, t) })
	}
	stopClients := func() {
		cancel()
		wg.Wait()
	}
	defer stopClients()

	faults := []failover{
		{name: "kill -9", inject: (*member).kill, repair: (*member).start},
		{name: "SIGSTOP", inject: (*member).pause, repair: (*member).resume},
		{name: "partition", inject: func(m *member) { pn.isolate(m.id, true) }, repair: func(m *member) { pn.isolate(m.id, false) }},
	}
	h.everyClient(t, ms, 10)
	for _, f := range faults {
		lead := leaderOf(t, ms)
		began := time.Now()
		f.inject(lead)
		h.everyClient(t, ms, 5)
		t.Logf("%s of the leader (server %d): every client completed 5 operations within %v",
			f.name, lead.id, time.Since(began).Round(time.Millisecond))
		f.repair(lead)
		leaderOf(t, ms)
		h.everyClient(t, ms, 5)
	}
	stopClients()
	finalReads(t, ms, h)
	checkHistory(t, h)
}

// setupKeys creates the znodes: data "" at version 0, the model's
// initial state.
func setupKeys(t *testing.T, ms []*member) {
	t.Helper()
	c := connect(t, connectString(ms), writerTimeout)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.Create(ctx, "/lin", nil, zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	for k := range linKeys {
		if _, _, err := c.Create(ctx, linKey(k), nil, zk.Persistent, acl); err != nil {
			t.Fatal(err)
		}
	}
}

// finalReads reads every key on every member, after a sync, into the
// history (as client linClients): each must see the final state.
func finalReads(t *testing.T, ms []*member, h *history) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, m := range ms {
		c := connect(t, m.addr, writerTimeout)
		for k := range linKeys {
			// ConnectionLoss is a legal answer (a leader change just
			// after the faults): the read is tried again, and only one
			// that completes goes into the history.
			for attempt := 1; ; attempt++ {
				began := time.Now()
				call := h.now()
				err := c.Sync(ctx, linKey(k))
				var data []byte
				var st zk.Stat
				if err == nil {
					data, st, err = c.Get(ctx, linKey(k))
				}
				if err == nil {
					h.add(porcupine.Operation{ClientId: linClients, Input: kvInput{key: k}, Call: call,
						Output: kvOutput{value: string(data), version: st.Version}, Return: h.now()}, true)
					break
				}
				if !errors.Is(err, zk.ErrConnectionLoss) || attempt == 10 {
					for _, m := range ms {
						t.Logf("server %d's log ends:\n%s", m.id, m.logTail())
					}
					t.Fatalf("sync and get on server %d: %v", m.id, err)
				}
				t.Logf("sync and get on server %d: %v after %v; again", m.id, err, time.Since(began).Round(time.Millisecond))
			}
		}
		c.Close()
	}
}

// checkHistory runs porcupine on the history; on a violation it writes
// the visualization and fails.
func checkHistory(t *testing.T, h *history) {
	t.Helper()
	h.mu.Lock()
	ops, summary := h.ops, h.summary()
	h.mu.Unlock()
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(kvModel, ops, linCheckFor)
	t.Logf("porcupine: %s in %v for %d operations: %s",
		res, time.Since(began).Round(time.Millisecond), len(ops), summary)
	switch res {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		t.Errorf("porcupine could not decide within %v", linCheckFor)
	default:
		t.Errorf("the history is not linearizable")
	}
	// Not t.TempDir: the file must outlive the test to be looked at.
	dir, err := os.MkdirTemp("", "zoo-linearizability-")
	if err != nil {
		t.Errorf("visualization: %v", err)
		return
	}
	file := filepath.Join(dir, "history.html")
	if err := porcupine.VisualizePath(kvModel, info, file); err != nil {
		t.Errorf("visualization: %v", err)
		return
	}
	t.Logf("visualization: %s", file)
}
