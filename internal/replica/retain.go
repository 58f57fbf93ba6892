package replica

import (
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// Log retention. After a snapshot the entries behind it are compacted
// but for the last TrailingEntries. A follower that lags by more (a
// loaded machine, a slow disk, a short pause) would then need the whole
// snapshot, and installing one costs its clients their watches'
// continuity and any write in flight (see the server's Restored
// handling). Apache's leader queues to a slow follower instead. So the
// leader keeps, beyond TrailingEntries, the entries a live follower still
// lacks, as long as they fit in RetainBytes; a follower further behind
// than that, or silent for longer than LaggardTicks, gets a snapshot as
// before. What was kept is dropped once the followers have it: the
// compaction is tried again every election timeout.
//
// Memory holds whole only the newest TrailingEntries applied entries
// (and those not yet applied): raft reads older ones, for a follower
// that lags, back from the WAL (wal.Storage.Evict). Before, memory held
// every entry since the last snapshot, and snapshots are paced by the
// tree's size (pace.go): about 100 MB of log at 1M znodes under setData.

// DefaultRetainBytes is Config.RetainBytes's default. 128 MiB of small
// writes (a create is about 100–200 bytes as an entry) is most of a
// million entries, minutes of lag at the rate one server sustains; of
// the largest (jute.maxbuffer, 1 MiB) still 128, more than TrailingEntries
// keeps of them in bytes only when they are large. It is a small share of
// the memory a tree that sees such rates holds, and a snapshot of that
// tree costs the follower far more to install.
const DefaultRetainBytes = 128 << 20

// DefaultLaggardElections is Config.LaggardTicks's default, in election
// timeouts: a follower silent that long is not about to catch up from
// memory (Apache's leader drops one after syncLimit ticks).
const DefaultLaggardElections = 10

// retention is the core's state of log retention.
type retention struct {
	// compactWant is how far the last snapshot allows the log to be
	// compacted (its index less TrailingEntries); compaction may have
	// stopped short of it for a lagging follower.
	compactWant uint64
	// heard is, per peer, the tick at which the leader last saw it
	// recently active (raft's Progress.RecentActive).
	heard map[uint64]uint64
}

// evictApplied lets the applied entries go from memory, all but the
// newest TrailingEntries, in steps of a quarter of that (an eviction
// copies the entries still held).
func (r *Replica) evictApplied() {
	keep := uint64(r.cfg.TrailingEntries)
	if r.applied < r.evicted+keep+keep/4 {
		return
	}
	r.evicted = r.applied - keep
	r.disk.Evict(r.evicted)
}

// compactBehind compacts the log after a snapshot at index: all but the
// trailing entries, less what a lagging follower still needs.
func (r *Replica) compactBehind(index uint64) {
	r.compactWant = max(r.compactWant, index-min(index, uint64(r.cfg.TrailingEntries)))
	r.compactTo(r.retainFrom(r.compactWant))
}

// retryCompaction compacts what was kept for followers that have since
// caught up, fallen too far behind or gone silent. It runs once per
// election timeout.
func (r *Replica) retryCompaction() {
	if r.compactWant <= r.compacted || r.ticks.Load()%uint64(r.cfg.ElectionTicks) != 0 {
		return
	}
	r.compactTo(r.retainFrom(r.compactWant))
}

// compactTo drops the entries up to index from memory.
func (r *Replica) compactTo(index uint64) {
	if index <= r.compacted {
		return
	}
	if err := r.disk.Compact(index); err != nil {
		r.cfg.Logger.Warn("log compaction", "index", index, "err", err)
		return
	}
	r.compacted = index
}

// trackPeers records, on the leader, which peers were recently active.
// It runs every tick.
func (r *Replica) trackPeers() {
	if r.rn.BasicStatus().RaftState != raft.StateLeader {
		clear(r.heard)
		return
	}
	if r.heard == nil {
		r.heard = map[uint64]uint64{}
	}
	r.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pr.RecentActive {
			r.heard[id] = r.ticks.Load()
		}
	})
}

// live reports whether the leader heard from peer id within LaggardTicks.
func (r *Replica) live(id uint64) bool { return r.heardWithin(id, uint64(r.cfg.LaggardTicks)) }

// heardWithin reports whether the leader heard from peer id within the
// last ticks ticks (as trackPeers records it).
func (r *Replica) heardWithin(id, ticks uint64) bool {
	t, ok := r.heard[id]
	return ok && r.ticks.Load()-t <= ticks
}

// retainFrom returns how far the log may be compacted, given that the
// last snapshot allows want: on the leader, no further than the last
// entry that every live follower within RetainBytes of want has (raft's
// Progress.Match); elsewhere, want.
func (r *Replica) retainFrom(want uint64) uint64 {
	if r.rn.BasicStatus().RaftState != raft.StateLeader {
		return want
	}
	var matches []uint64
	r.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		// A follower already being sent a snapshot gains nothing.
		if id != r.cfg.ID && pr.Match < want && pr.State != tracker.StateSnapshot && r.live(id) {
			matches = append(matches, pr.Match)
		}
	})
	if len(matches) == 0 {
		return want
	}
	floor := r.retainFloor(want, slices.Min(matches))
	keep := want
	for _, m := range matches {
		if m >= floor {
			keep = min(keep, m)
		}
	}
	return keep
}

// retainFloor returns the lowest index from which the entries up to want
// fit in RetainBytes, looking no lower than lowest (nor than what memory
// still holds): the log may be kept from there for a follower, not from
// further back.
func (r *Replica) retainFloor(want, lowest uint64) uint64 {
	first, err := r.disk.FirstIndex()
	if err != nil {
		return want
	}
	lo := max(lowest+1, first)
	if lo > want {
		return want
	}
	sizes, err := r.disk.Sizes(lo, want+1)
	if err != nil {
		return want
	}
	floor, size := want, int64(0)
	for i := len(sizes) - 1; i >= 0; i-- {
		if size += int64(sizes[i]); size > r.cfg.RetainBytes {
			break
		}
		floor = lo + uint64(i) - 1
	}
	return floor
}
