package tree

import (
	"unsafe"

	"github.com/zoohq/zoo/internal/jute"
)

// The tree's memory is shaped for Go's collector (issue 17). A 3M-znode
// tree held as a map of path strings to node structs, each with a data
// slice, an ACL pointer and a map of children, gave the collector about
// seven pointers and three objects per znode to trace: at 3M znodes a
// mark phase took 40–50 s on a busy machine and the live heap was as
// large as Apache's. Here a znode costs the collector nothing to trace:
//
//   - nodes live in fixed-size chunks of a slab, named by a uint32 id
//     (nodeID); a chunk is one large object, and free slots are reused,
//     so create+delete churn does not grow it;
//   - a node's name and data are one record in the bufStore's large
//     pointer-free chunks (bufs.go), named by a number, not a pointer,
//     so the slab holds no pointers; a record is replaced, never written
//     in place, when the data changes, so a slice or string once handed
//     out stays valid;
//   - a node's children are a doubly linked list of ids through the
//     children's own slots (firstChild, prev, next), not a map;
//   - the path index is a table of 8-byte slots (index.go), a node's id
//     and part of its path's seeded hash, which holds no pointers, so the
//     collector never scans it. A lookup confirms the path by matching
//     names up the parent chain;
//   - ACLs are indexes into the interned ACL table.
//
// The cost is a copy of the data on each change and an O(depth) check on
// each lookup, both small against what they save.

// nodeID names a slot of the slab; 0 is no node.
type nodeID uint32

// rootID is the root's slot: New creates it first and it is never freed.
const rootID nodeID = 1

const (
	chunkShift = 10
	chunkSize  = 1 << chunkShift // 1,024 nodes, 112 KiB, which the collector never scans
	chunkMask  = chunkSize - 1
)

// nilData in dataLen marks nil data, which differs from empty data on
// the wire.
const nilData = ^uint32(0)

// node is one znode. It is 112 bytes, a size class of Go's allocator;
// TestNodeSize keeps it there.
type node struct {
	buf        bufRef // the name, then the data; 0 when both are empty
	nameLen    uint32 // jute.maxbuffer bounds names and data far below 4 GiB
	dataLen    uint32 // or nilData
	gen        uint32 // the newest Frozen view it was saved for, or created under
	acl        uint32 // index in the ACL table
	parent     nodeID // 0 for the root and for free slots
	firstChild nodeID
	prev, next nodeID // siblings; next also links the free list
	numKids    uint32
	// digest is the node's term of the tree's Apache digest, as of the
	// last redigest: a change subtracts it instead of hashing the old
	// path, data and stat again (a CRC of the data, 3% of a write's CPU).
	// It fills what was padding before stat.
	digest uint32
	stat   StatPersisted
}

// emptyData is what empty, non-nil data is returned as.
var emptyData = []byte{}

// dataLength is the data's length, 0 for nil data.
func (n *node) dataLength() int {
	if n.dataLen == nilData {
		return 0
	}
	return int(n.dataLen)
}

func (n *node) numChildren() int32 { return int32(n.numKids) }

func (n *node) report() jute.Stat {
	return n.stat.Report(n.numChildren(), int32(n.dataLength()))
}

// slab holds the nodes. Chunks are never moved or freed, so a Frozen
// view can keep the chunk list it saw and read old slots from another
// goroutine while the writer appends chunks.
type slab struct {
	chunks []*[chunkSize]node
	free   nodeID // head of the free list, linked through next
	count  int    // nodes in use
}

func (s *slab) at(id nodeID) *node { return atChunk(s.chunks, id) }

func atChunk(chunks []*[chunkSize]node, id nodeID) *node {
	return &chunks[id>>chunkShift][id&chunkMask]
}

// alloc returns a zeroed slot.
func (s *slab) alloc() nodeID {
	s.count++
	if id := s.free; id != 0 {
		n := s.at(id)
		s.free = n.next
		*n = node{}
		return id
	}
	c := new([chunkSize]node)
	base := nodeID(len(s.chunks)) << chunkShift
	s.chunks = append(s.chunks, c)
	// Slot 0 of the first chunk stays unused: id 0 is no node.
	first := base
	if first == 0 {
		first = 1
	}
	for i := base + chunkSize - 1; i > first; i-- {
		c[i&chunkMask].next = s.free
		s.free = i
	}
	return first
}

// release puts a slot back on the free list; its record was freed first
// (Tree.dropBuf).
func (s *slab) release(id nodeID) {
	s.count--
	*s.at(id) = node{next: s.free}
	s.free = id
}

// Ref names a node as a lookup found it (Info.Ref), so that a change of
// the same path soon after can find the node again without the path
// index: the leader preps a write (a lookup) and then applies it, and at
// millions of znodes the index's hash and probe are cache and TLB misses
// (issue 17). A Ref is only a hint. The write checks it exactly, by the
// slot being live and its names up the parent chain spelling the path,
// which is the check a lookup ends with anyway, and looks the path up if
// it fails; so a Ref made stale by anything in between (the node deleted,
// its slot reused, even another tree) costs a lookup, never a wrong node.
// It is a slot number of this process: never write it to the log or send
// it to another server. The zero Ref names no node.
type Ref struct{ id nodeID }

// found returns the node at path: ref's if ref still names it, else the
// index's answer.
func (t *Tree) found(ref Ref, path string) nodeID {
	if id := t.checkRef(ref, path); id != 0 {
		return id
	}
	return t.lookup(path)
}

// checkRef returns ref's slot if it holds the live node at path, else 0.
// A free slot has no parent, like the root, so only the root's slot may
// match without one.
func (t *Tree) checkRef(ref Ref, path string) nodeID {
	id := ref.id
	if id == 0 || int(id>>chunkShift) >= len(t.nodes.chunks) {
		return 0
	}
	if t.nodes.at(id).parent == 0 && id != rootID {
		return 0
	}
	if !t.pathIs(id, path) {
		return 0
	}
	return id
}

// pathIs reports whether id's path is path, matching names from the leaf
// up.
func (t *Tree) pathIs(id nodeID, path string) bool {
	for {
		n := t.nodes.at(id)
		if n.parent == 0 {
			return path == Root
		}
		name := t.bufs.name(n)
		if len(path) < len(name)+1 || path[len(path)-len(name):] != name || path[len(path)-len(name)-1] != '/' {
			return false
		}
		path = path[:len(path)-len(name)-1]
		if n.parent == rootID {
			return path == ""
		}
		id = n.parent
	}
}

// pathOf builds id's full path.
func (t *Tree) pathOf(id nodeID) string {
	if id == rootID {
		return Root
	}
	size := 0
	for i := id; i != rootID; i = t.nodes.at(i).parent {
		size += 1 + int(t.nodes.at(i).nameLen)
	}
	b := make([]byte, size)
	end := size
	for i := id; i != rootID; i = t.nodes.at(i).parent {
		n := t.nodes.at(i)
		end -= int(n.nameLen)
		copy(b[end:], t.bufs.name(n))
		end--
		b[end] = '/'
	}
	return unsafe.String(&b[0], len(b))
}

// addKid links child at the head of parent's list.
func (t *Tree) addKid(parent, child nodeID) {
	p, c := t.nodes.at(parent), t.nodes.at(child)
	c.parent, c.prev, c.next = parent, 0, p.firstChild
	if p.firstChild != 0 {
		t.nodes.at(p.firstChild).prev = child
	}
	p.firstChild = child
	p.numKids++
	t.names.forget(parent)
}

// removeKid unlinks child from its parent's list.
func (t *Tree) removeKid(child nodeID) {
	c := t.nodes.at(child)
	p := t.nodes.at(c.parent)
	if c.prev != 0 {
		t.nodes.at(c.prev).next = c.next
	} else {
		p.firstChild = c.next
	}
	if c.next != 0 {
		t.nodes.at(c.next).prev = c.prev
	}
	p.numKids--
	t.names.forget(c.parent)
	c.prev, c.next = 0, 0
}

// kidIDs returns the ids of id's children, unsorted.
func (t *Tree) kidIDs(id nodeID) []nodeID {
	n := t.nodes.at(id)
	if n.numKids == 0 {
		return nil
	}
	out := make([]nodeID, 0, n.numKids)
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		out = append(out, c)
	}
	return out
}
