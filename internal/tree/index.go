package tree

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"

	"github.com/zoohq/zoo/internal/jute"
)

// pathIndex finds a node by its full path. It is an open-addressed hash
// table of its own rather than a Go map, for two reasons (issue 14):
//
//   - a slot is 8 bytes, the node's id and 32 bits of its path's hash (its
//     tag), and the table is at most three quarters full: about 17 bytes
//     per znode, where a map[uint64]nodeID took about 38;
//   - a snapshot load (Restore) does not probe it per node, a cache miss
//     each that was a quarter of a 1M-znode load. The nodes restored are
//     put in at the end (flush), sorted by their home slot, so that the
//     table fills front to back.
//
// A path's home slot is the top bits of its tag, so a table twice the size
// keeps the order of the entries (grow) and sorting by tag sorts by home.
// Collisions go to the next free slot (linear probing; deletion shifts the
// run back, so there are no tombstones). A lookup confirms a tag's match
// by matching names up the parent chain (pathIs).
//
// The hash is seeded per tree, so that no client can choose paths that
// collide on every server.
type pathIndex struct {
	seed  maphash.Seed
	mask  uint64   // all ones; tests narrow it to force collisions
	slots []uint64 // tag<<32 | id; 0 is free (no node has id 0)
	shift uint     // 32 - log2(len(slots)): tag>>shift is the home slot
	count int      // entries in slots
	// pending holds the entries of nodes Restore linked, not yet in
	// slots: flush puts them in before any lookup.
	pending []uint64
}

// minSlots is the smallest table: a fresh tree's system nodes fit.
const minSlots = 16

func newPathIndex() pathIndex {
	x := pathIndex{seed: maphash.MakeSeed(), mask: ^uint64(0)}
	x.resize(minSlots)
	return x
}

func (x *pathIndex) hash(path string) uint64 { return maphash.String(x.seed, path) & x.mask }

func entry(h uint64, id nodeID) uint64 { return h>>32<<32 | uint64(id) }

func entryTag(v uint64) uint32 { return uint32(v >> 32) }

func entryID(v uint64) nodeID { return nodeID(uint32(v)) }

func (x *pathIndex) home(tag uint32) int { return int(tag >> x.shift) }

func (x *pathIndex) next(i int) int { return (i + 1) & (len(x.slots) - 1) }

// resize makes the table n slots (a power of two) and puts every entry
// back. Walking the old table in order puts them in the new one nearly in
// order too: homes only split in two.
func (x *pathIndex) resize(n int) {
	old := x.slots
	x.slots = make([]uint64, n)
	x.shift = uint(32 - bits.TrailingZeros(uint(n))) // n is a power of two
	for _, v := range old {
		if v != 0 {
			x.place(v)
		}
	}
}

// reserve grows the table until n entries fit at most three quarters full.
func (x *pathIndex) reserve(n int) {
	size := len(x.slots)
	for n > size/4*3 {
		size *= 2
	}
	if size != len(x.slots) {
		x.resize(size)
	}
}

// place puts v in the first free slot from its home.
func (x *pathIndex) place(v uint64) {
	i := x.home(entryTag(v))
	for x.slots[i] != 0 {
		i = x.next(i)
	}
	x.slots[i] = v
}

func (x *pathIndex) insert(h uint64, id nodeID) {
	x.count++
	x.reserve(x.count)
	x.place(entry(h, id))
}

// remove takes id's entry out and shifts back the entries after it in its
// run that may move closer to their home.
func (x *pathIndex) remove(h uint64, id nodeID) {
	v := entry(h, id)
	i := x.home(entryTag(v))
	for x.slots[i] != v {
		if x.slots[i] == 0 {
			return // not indexed: nothing to do
		}
		i = x.next(i)
	}
	x.count--
	for j := i; ; {
		x.slots[i] = 0
		for {
			j = x.next(j)
			w := x.slots[j]
			if w == 0 {
				return
			}
			// w may fill the hole at i unless its home lies cyclically
			// in (i, j].
			k := x.home(entryTag(w))
			if i <= j && (k <= i || k > j) || i > j && k <= i && k > j {
				x.slots[i] = w
				i = j
				break
			}
		}
	}
}

// find returns the node at path, whose hash is h, among the entries in
// slots (not the pending ones), or 0.
func (t *Tree) find(h uint64, path string) nodeID {
	x := &t.index
	tag := entryTag(h) // a hash's top half is its entry's tag
	for i := x.home(tag); ; i = x.next(i) {
		v := x.slots[i]
		if v == 0 {
			return 0
		}
		if entryTag(v) == tag && t.pathIs(entryID(v), path) {
			return entryID(v)
		}
	}
}

// lookupHashed returns the node at path, whose hash is h, or 0.
func (t *Tree) lookupHashed(h uint64, path string) nodeID {
	t.flushIndex()
	return t.find(h, path)
}

// lookup returns the node at path, or 0.
func (t *Tree) lookup(path string) nodeID { return t.lookupHashed(t.index.hash(path), path) }

func (t *Tree) indexAdd(path string, id nodeID) {
	t.flushIndex()
	t.index.insert(t.index.hash(path), id)
}

func (t *Tree) indexRemove(path string, id nodeID) {
	t.flushIndex()
	t.index.remove(t.index.hash(path), id)
}

// flushIndex puts the nodes Restore linked into the index, in the order
// of their home slots. Two nodes restored with the same path are a
// snapshot's fault; the second is left out of the index, and the error is
// kept for Restored to report.
func (t *Tree) flushIndex() {
	x := &t.index
	if len(x.pending) == 0 {
		return
	}
	slices.Sort(x.pending) // by tag, so by home slot
	x.count += len(x.pending)
	x.reserve(x.count)
	for _, v := range x.pending {
		if dup := t.sameTagAndPath(v); dup != "" {
			x.count--
			if t.restoreErr == nil {
				t.restoreErr = fmt.Errorf("tree: %s restored twice: %w", dup, jute.NodeExists)
			}
			continue
		}
		x.place(v)
	}
	x.pending = x.pending[:0]
	if cap(x.pending) > minSlots {
		x.pending = nil // a load's worth: not kept
	}
}

// sameTagAndPath returns the path of v's node if the index already holds
// another node with its tag and path, else "". Equal tags are rare, and
// only they cost building a path.
func (t *Tree) sameTagAndPath(v uint64) string {
	x := &t.index
	tag := entryTag(v)
	var path string
	for i := x.home(tag); x.slots[i] != 0; i = x.next(i) {
		if w := x.slots[i]; entryTag(w) == tag {
			if path == "" {
				path = t.pathOf(entryID(v))
			}
			if t.pathIs(entryID(w), path) {
				return path
			}
		}
	}
	return ""
}
