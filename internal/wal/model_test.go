package wal

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// model is the naive reference: what a correct log holds after a sequence
// of acknowledged operations.
type model struct {
	hs raftpb.HardState
	// synced is the newest HardState known durable: hs, unless hs only
	// moved the commit index (a lazy commit) and nothing synced since.
	synced raftpb.HardState
	snap   raftpb.SnapshotMetadata
	ents   []raftpb.Entry // after snap, contiguous
	term   uint64
	// For recovery from older snapshots: the entries since the log began
	// or a leader's snapshot replaced it, the snapshot markers of that
	// log, and the point released up to.
	all      []raftpb.Entry
	markers  []raftpb.SnapshotMetadata
	released uint64
}

// appendAll records a save of ents in all.
func (m *model) appendAll(ents []raftpb.Entry) {
	if len(m.all) > 0 {
		m.all = m.all[:ents[0].Index-m.all[0].Index]
	}
	m.all = append(m.all, ents...)
}

// check compares a recovery with the model. Which older markers survive
// depends on where segments were cut, so Markers is checked as bounds:
// every marker since the release point is there, nothing the log never
// held, the newest last; and ReadFrom of each gives the log after it.
func (m *model) check(t *testing.T, w *WAL, st *State) {
	t.Helper()
	want := m.state()
	want.Markers = st.Markers
	checkState(t, st, want)
	for _, mk := range m.markers {
		if mk.Index >= m.released && !slices.ContainsFunc(st.Markers, func(g raftpb.SnapshotMetadata) bool { return g.Index == mk.Index }) {
			t.Fatalf("marker %d (released to %d) missing from %v", mk.Index, m.released, markerIndexes(st.Markers))
		}
	}
	if n := len(st.Markers); m.snap.Index > 0 && (n == 0 || !reflect.DeepEqual(st.Markers[n-1], m.snap)) {
		t.Fatalf("markers %v do not end with the snapshot at %d", markerIndexes(st.Markers), m.snap.Index)
	}
	for _, g := range st.Markers {
		if !slices.ContainsFunc(m.markers, func(mk raftpb.SnapshotMetadata) bool { return reflect.DeepEqual(mk, g) }) {
			t.Fatalf("marker %+v was never saved in this log", g)
		}
		older, err := w.ReadFrom(g.Index)
		if err != nil {
			t.Fatalf("ReadFrom(%d): %v", g.Index, err)
		}
		want := State{HardState: m.hs, Snapshot: g, Markers: older.Markers}
		for _, e := range m.all {
			if e.Index > g.Index {
				want.Entries = append(want.Entries, e)
			}
		}
		checkState(t, older, want)
	}
}

func (m *model) last() uint64 {
	if n := len(m.ents); n > 0 {
		return m.ents[n-1].Index
	}
	return m.snap.Index
}

func (m *model) state() State {
	return State{HardState: m.hs, Snapshot: m.snap, Entries: append([]raftpb.Entry(nil), m.ents...)}
}

// TestModel runs random sequences of appends, truncations, snapshot markers
// (local and received), purges, lazy commits, clean reopens and crashes
// (some tearing the unsynced lazy commits) against the model, with
// segments small enough that cuts and purges happen often.
func TestModel(t *testing.T) {
	opts := Options{SegmentSize: 2048, LazyCommit: true}
	tornSeeds := 0 // seeds in which a torn tail was cut: the path is exercised
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			mem := vfs.NewMem()
			w, _, err := Open(mem, testDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			m := &model{term: 1}
			var trace []string
			defer func() {
				if t.Failed() {
					t.Logf("trace: %v", trace)
				}
			}()
			for range 300 {
				switch op := rng.IntN(22); {
				case op < 10: // append, sometimes over a conflicting suffix
					lo := m.last() + 1
					if rng.IntN(4) == 0 && len(m.ents) > 0 {
						lo = m.ents[rng.IntN(len(m.ents))].Index
						m.term++
					}
					ents := mkEnts(lo, lo+uint64(rng.IntN(8)), m.term)
					var hs raftpb.HardState
					if rng.IntN(2) == 0 {
						hs = raftpb.HardState{Term: m.term, Vote: 1, Commit: lo - 1}
					}
					trace = append(trace, fmt.Sprintf("save %d..%d", lo, ents[len(ents)-1].Index))
					if err := w.Save(hs, ents); err != nil {
						t.Fatal(err)
					}
					m.ents = append(m.ents[:lo-m.snap.Index-1], ents...)
					m.appendAll(ents)
					if hs != (raftpb.HardState{}) {
						m.hs = hs
					}
					m.synced = m.hs // a Save with entries syncs
				case op < 12 && len(m.ents) > 0: // local snapshot
					e := m.ents[rng.IntN(len(m.ents))]
					meta := raftpb.SnapshotMetadata{Index: e.Index, Term: e.Term, ConfState: raftpb.ConfState{Voters: []uint64{1}}}
					trace = append(trace, fmt.Sprintf("snap %d", e.Index))
					if err := w.SaveSnapshotMarker(meta); err != nil {
						t.Fatal(err)
					}
					m.ents = append([]raftpb.Entry(nil), m.ents[e.Index-m.snap.Index:]...)
					m.snap = meta
					m.markers = append(m.markers, meta)
					m.synced = m.hs
				case op < 13: // snapshot received from a leader
					m.term++
					// Anywhere from inside the log to past its end; its new
					// term conflicts with every entry there.
					meta := raftpb.SnapshotMetadata{Index: m.snap.Index + 1 + uint64(rng.IntN(len(m.ents)+4)), Term: m.term}
					if meta.Index <= m.snap.Index {
						continue
					}
					trace = append(trace, fmt.Sprintf("recv-snap %d", meta.Index))
					if err := w.SaveReceivedSnapshotMarker(meta); err != nil {
						t.Fatal(err)
					}
					m.snap, m.ents = meta, nil
					m.all, m.markers = nil, []raftpb.SnapshotMetadata{meta}
					m.synced = m.hs
				case op < 16:
					idx := m.snap.Index // the usual case: release what the snapshot covers
					if rng.IntN(2) == 0 {
						idx -= uint64(rng.IntN(int(idx) + 1))
					}
					trace = append(trace, fmt.Sprintf("release %d", idx))
					if err := w.ReleaseTo(idx); err != nil {
						t.Fatal(err)
					}
					m.released = max(m.released, min(idx, m.snap.Index))
				case op < 18: // a lazy commit: only the commit index moves
					if m.hs == (raftpb.HardState{}) {
						continue
					}
					hs := m.hs
					hs.Commit++
					trace = append(trace, fmt.Sprintf("commit %d", hs.Commit))
					if err := w.Save(hs, nil); err != nil {
						t.Fatal(err)
					}
					m.hs = hs
				default: // reopen, after a crash half of the time
					w.Close()
					fs := mem
					crash := rng.IntN(4)
					switch crash {
					case 1:
						fs = mem.CrashClone()
					case 2, 3: // a power cut keeps a prefix of the unsynced writes
						fs = mem.CrashCloneTorn(func(_ string, n int) int { return rng.IntN(n + 1) })
					}
					mem = fs
					trace = append(trace, fmt.Sprintf("reopen (crash %d)", crash))
					var st *State
					w, st, err = Open(fs, testDir, opts)
					if err != nil {
						t.Fatal(err)
					}
					if crash > 0 && st.HardState != m.hs {
						// The lazy commits since the last sync may be lost,
						// all or a prefix of them; never what was synced.
						if st.HardState.Term != m.hs.Term || st.HardState.Vote != m.hs.Vote ||
							st.HardState.Commit < m.synced.Commit || st.HardState.Commit > m.hs.Commit {
							t.Fatalf("recovered %+v after a crash; synced %+v, latest %+v", st.HardState, m.synced, m.hs)
						}
						m.hs = st.HardState
					}
					if crash > 0 { // what a crash left is on disk; a Close syncs nothing
						m.synced = m.hs
					}
					m.check(t, w, st)
				}
			}
			w.Close()
			w, st, err := Open(mem, testDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			m.check(t, w, st)
			if names, _ := mem.List(testDir); slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".broken") }) {
				tornSeeds++
			}
		})
	}
	if tornSeeds == 0 {
		t.Fatal("no seed cut a torn tail: the torn crashes tested nothing")
	}
	t.Logf("%d of 20 seeds cut a torn tail", tornSeeds)
}
