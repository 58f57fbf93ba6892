package replica

// Snapshots are paced by size as well as by count (issue 17). A snapshot
// walks and writes the whole tree, so its cost grows with the tree; taken
// every snapCount txns whatever the tree's size, its cost per write grew
// with the tree too (at 1M znodes, 124 MB written every 50–100k creates,
// five times the log's own bytes; at 10M, back to back). The rule:
//
//   - snapCount, as in Apache, is the number of txns before a snapshot
//     can be taken (rolled at random in [snapCount/2, snapCount] so the
//     members of an ensemble do not all snapshot at once);
//   - and the log written since the last snapshot must also reach
//     DefaultSnapLogRatio of that snapshot's size. A snapshot then costs
//     at most 1/ratio bytes written (and nodes walked) per byte of log,
//     whatever the size of the tree, and recovery replays at most about
//     ratio times a snapshot's bytes of log after loading it;
//   - or, as Apache's snapSizeLimitInKb, the log written since the last
//     snapshot reaches a limit rolled in [limit/2, limit]: that one takes a
//     snapshot whatever the count, and bounds the log.

// DefaultSnapLogRatio is Config.SnapLogRatio's default: a snapshot waits
// for at least as many bytes of log as half its predecessor's size, so the
// disk writes at most two snapshot bytes per log byte.
const DefaultSnapLogRatio = 0.5

// DefaultSnapSizeLimit is Apache's snapSizeLimitInKb default, 4 GiB.
const DefaultSnapSizeLimit = 4 << 30

// snapRule is what decides that a snapshot is due.
type snapRule struct {
	count     uint64  // entries applied since the last snapshot needed (rolled)
	ratio     float64 // log bytes needed, as a fraction of the last snapshot's size; 0: none
	sizeLimit int64   // log bytes that force a snapshot (rolled); 0: no limit
}

// snapProgress is what was done since the last snapshot started.
type snapProgress struct {
	entries  uint64 // entries applied
	logBytes int64  // bytes of those entries' data
	lastSnap int64  // the size of the last snapshot file; 0 if unknown
}

// snapDue reports whether a snapshot should start, by rule, given p.
func snapDue(rule snapRule, p snapProgress) bool {
	if rule.sizeLimit > 0 && p.logBytes >= rule.sizeLimit {
		return true
	}
	if p.entries < rule.count {
		return false
	}
	return float64(p.logBytes) >= rule.ratio*float64(p.lastSnap)
}

// rollSnapRule draws the next snapshot's thresholds: the count in
// (snapCount/2, snapCount] and the size limit in (limit/2, limit], at
// random as Apache's SyncRequestProcessor rolls them, so that the members
// of an ensemble do not all snapshot at the same moment. randn returns a
// random int in [0, n).
func rollSnapRule(snapCount int, ratio float64, sizeLimit int64, randn func(n int) int) snapRule {
	half := snapCount / 2
	rule := snapRule{count: uint64(half + 1 + randn(max(snapCount-half, 1))), ratio: ratio}
	if sizeLimit > 0 {
		halfSize := sizeLimit / 2
		// randn takes an int: roll in 1 KiB steps, as Apache's limit is in KiB.
		steps := max(int((sizeLimit-halfSize)>>10), 1)
		rule.sizeLimit = halfSize + 1 + int64(randn(steps))<<10
	}
	return rule
}

// nextSnapshot starts counting towards the next snapshot from now.
func (r *Replica) nextSnapshot() {
	r.snapRule = rollSnapRule(r.cfg.SnapCount, r.cfg.SnapLogRatio, r.cfg.SnapSizeLimit, r.cfg.Rand)
	r.snapProgress.entries, r.snapProgress.logBytes = 0, 0
	r.snapForce = false
}

// snapshotDue reports whether maybeSnapshot should start one now.
func (r *Replica) snapshotDue() bool {
	return r.snapForce || snapDue(r.snapRule, r.snapProgress)
}

// forceSnapshot makes the next maybeSnapshot start one, whatever the rule
// says.
func (r *Replica) forceSnapshot() { r.snapForce = true }

// countApplied adds applied entries to the progress towards the next
// snapshot.
func (r *Replica) countApplied(entries uint64, bytes int64) {
	r.snapProgress.entries += entries
	r.snapProgress.logBytes += bytes
}
