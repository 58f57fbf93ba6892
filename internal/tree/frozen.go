package tree

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrFrozenClosed is returned by Frozen.Walk after Close.
var ErrFrozenClosed = errors.New("tree: frozen view closed")

// Frozen is a consistent view of a tree as it was when Freeze was called,
// readable from another goroutine while the tree's writer goes on
// changing the tree. It is how a snapshot is written off the apply path:
// the writer pays for a copy of a node only the first time it changes
// that node during the walk, and the walker holds no lock the readers or
// the writer wait on for more than one node.
//
// The view is copy-on-write. Every node carries the generation of the
// last view it was saved for (or created under). Before the writer
// changes a node older than an open view, it saves the node's data, ACL,
// stat and child list into the view (Tree.touch); the walker reads a
// node's saved copy if there is one, else the live node, under the view's
// mutex, which is the only thing the two share. Nodes created after the
// freeze are newer than the view: no saved child list leads to them, and
// they are never saved for it.
type Frozen struct {
	gen    uint32
	closed atomic.Bool
	// chunks is the slab's chunk list at the freeze: every node of the
	// view is in it, and chunks are never moved. acls is the ACL table's
	// slot list at the freeze: a node not saved for the view still has
	// the ACL slot it had then, and a slot is reused only after every
	// node using it was saved.
	chunks []*[chunkSize]node
	acls   []*aclEntry
	// bufs is the bufStore's chunk table at the freeze: every record a
	// node of the view names is in it, and compaction, which moves
	// records, waits while a view is open.
	bufs []bufChunk

	mu    sync.Mutex
	saved map[nodeID]*savedNode // guarded by mu
	// savedBits has the bit of every id in saved set. The walker tests it
	// before probing saved: writes during a long walk save hundreds of
	// thousands of nodes (a 3M-znode snapshot under 25k setData/s), and
	// then each probe of the map is a cache miss, twice per node walked.
	savedBits []uint64 // guarded by mu; allocated at the first save
}

// savedNode is a node as it was at the freeze.
type savedNode struct {
	buf     bufRef
	nameLen uint32
	dataLen uint32
	acl     *aclEntry
	stat    StatPersisted
	kids    []nodeID // unsorted
}

// Freeze returns a view of the tree as it is now. It must be called by
// the tree's writer, or with the writer excluded (the replica holds its
// write lock). The view stays consistent until Close, which may be called
// from any goroutine; the writer drops it at its next change after that.
// Several views may be open at once.
func (t *Tree) Freeze() *Frozen {
	if t.gen == math.MaxUint32 {
		// Once in four billion freezes: make every node older than any
		// view again. Open views stay right: touch never replaces a copy
		// a view already has, so saving a node twice is harmless.
		for _, c := range t.nodes.chunks {
			for i := range c {
				c[i].gen = 0
			}
		}
		t.gen = 0
	}
	t.gen++
	f := &Frozen{
		gen:    t.gen,
		chunks: slices.Clip(t.nodes.chunks),
		acls:   slices.Clone(t.acls.entries),
		bufs:   slices.Clone(t.bufs.chunks),
		saved:  make(map[nodeID]*savedNode),
	}
	t.frozen = append(t.frozen, f)
	return f
}

// Close ends the view: the writer stops saving nodes for it, and Walk
// fails. It is safe to call more than once and from any goroutine.
func (f *Frozen) Close() {
	f.closed.Store(true)
}

// touch saves the node id, if it is older than an open view, into every
// such view before the writer changes it. Every method that changes a
// node's data, ACL, stat or children, or frees it, calls it first.
func (t *Tree) touch(id nodeID) {
	n := t.nodes.at(id)
	if len(t.frozen) == 0 || n.gen == t.gen {
		return
	}
	t.dropClosed()
	var s *savedNode
	for _, f := range t.frozen {
		if f.gen <= n.gen {
			continue
		}
		if s == nil {
			s = &savedNode{buf: n.buf, nameLen: n.nameLen, dataLen: n.dataLen,
				acl: t.acls.get(n.acl), stat: n.stat, kids: t.kidIDs(id)}
		}
		f.mu.Lock()
		if _, ok := f.saved[id]; !ok {
			f.saved[id] = s
			f.markSaved(id)
		}
		f.mu.Unlock()
	}
	n.gen = t.gen
}

// dropClosed forgets the views that were closed.
func (t *Tree) dropClosed() {
	t.frozen = slices.DeleteFunc(t.frozen, func(f *Frozen) bool { return f.closed.Load() })
	if len(t.frozen) == 0 {
		t.frozen = nil
	}
}

// markSaved sets id's bit in savedBits. Only nodes of the view are
// saved for it, so their ids are in its chunks and the first allocation
// is the last; it grows anyway rather than trust that.
func (f *Frozen) markSaved(id nodeID) {
	if f.savedBits == nil {
		f.savedBits = make([]uint64, len(f.chunks)*chunkSize/64)
	}
	w := int(id / 64)
	if w >= len(f.savedBits) {
		f.savedBits = append(f.savedBits, make([]uint64, w+1-len(f.savedBits))...)
	}
	f.savedBits[w] |= 1 << (id % 64)
}

// savedCopy returns id's saved copy, if the writer saved one.
func (f *Frozen) savedCopy(id nodeID) (*savedNode, bool) {
	if w := int(id / 64); w >= len(f.savedBits) || f.savedBits[w]&(1<<(id%64)) == 0 {
		return nil, false
	}
	s, ok := f.saved[id]
	return s, ok
}

// frozenNode is a node of the view as it was at the freeze, but for
// its children, which only their count stands for.
type frozenNode struct {
	buf     bufRef
	nameLen uint32
	dataLen uint32
	numKids uint32
	acl     *aclEntry
	stat    StatPersisted
}

// nodeLocked returns id as it was at the freeze; f.mu must be held. It
// reads the live slot only while the node is unsaved, that is unchanged
// since the freeze; the writer saves it under mu before changing it, so
// the two never race.
func (f *Frozen) nodeLocked(id nodeID) frozenNode {
	if s, ok := f.savedCopy(id); ok {
		return frozenNode{buf: s.buf, nameLen: s.nameLen, dataLen: s.dataLen, numKids: uint32(len(s.kids)), acl: s.acl, stat: s.stat}
	}
	n := atChunk(f.chunks, id)
	return frozenNode{buf: n.buf, nameLen: n.nameLen, dataLen: n.dataLen, numKids: n.numKids, acl: f.acls[n.acl], stat: n.stat}
}

// kidsOf appends the children id had at the freeze to ids.
func (f *Frozen) kidsOf(id nodeID, ids []nodeID) []nodeID {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.savedCopy(id); ok {
		return append(ids, s.kids...)
	}
	for c := atChunk(f.chunks, id).firstChild; c != 0; c = atChunk(f.chunks, c).next {
		ids = append(ids, c)
	}
	return ids
}

// childRef is a child on the walk's stack: its id, and the first 16
// bytes of its name as two big-endian integers, zero-padded. Sorting
// children compares keys and moves 24 bytes; a 3M-znode walk that
// compared names, scattered over the record store, spent half its time
// in the sort (issue 17).
type childRef struct {
	key [2]uint64
	id  nodeID
	at  uint32 // in a Frozen walk, its index in the frame's nodes
}

func newChildRef(name string, id nodeID) childRef {
	var b [16]byte
	copy(b[:], name)
	return childRef{key: [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}, id: id}
}

// sortKids sorts refs by name, which name returns; scratch is a buffer
// it may reuse. Keys compare as their names' first 16 bytes do, except
// that a name shorter than 16 bytes reads as if padded with zero bytes,
// which only ties it with the names it is a prefix of. So sorting by
// key, then each run of equal keys by name, sorts by name.
func sortKids(refs []childRef, scratch *[]childRef, name func(nodeID) string) {
	if len(refs) < 2 {
		return
	}
	if cap(*scratch) < len(refs) {
		*scratch = make([]childRef, len(refs))
	}
	sortByKey(refs, (*scratch)[:len(refs)])
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].key == refs[i].key {
			j++
		}
		if j-i > 1 {
			sortTied(refs[i:j], name)
		}
		i = j
	}
}

// sortByKey sorts refs by key with tmp as a buffer of the same length:
// a radix sort, least significant byte first, skipping the bytes that
// every key shares. Siblings' names mostly differ in a few bytes
// ("node-0000123"), so it takes a few passes over the refs, where a
// comparison sort of 1,000 children took 180 µs of mispredicted
// branches.
func sortByKey(refs, tmp []childRef) {
	// A bit set in every key, or in none, orders nothing.
	every, some := [2]uint64{^uint64(0), ^uint64(0)}, [2]uint64{}
	for _, r := range refs {
		every[0], every[1] = every[0]&r.key[0], every[1]&r.key[1]
		some[0], some[1] = some[0]|r.key[0], some[1]|r.key[1]
	}
	src, dst := refs, tmp
	for b := 15; b >= 0; b-- {
		word, shift := b/8, uint(7-b%8)*8
		if (every[word]^some[word])>>shift&0xff == 0 {
			continue // the same in every key
		}
		var at [256]int
		for _, r := range src {
			at[byte(r.key[word]>>shift)]++
		}
		sum := 0
		for i, n := range at {
			at[i], sum = sum, sum+n
		}
		for _, r := range src {
			k := byte(r.key[word] >> shift)
			dst[at[k]] = r
			at[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
}

// sortTied sorts refs, whose names share their first 16 bytes, by name,
// reading each name once.
func sortTied(refs []childRef, name func(nodeID) string) {
	type named struct {
		name string
		ref  childRef
	}
	tied := make([]named, len(refs))
	for i, r := range refs {
		tied[i] = named{name(r.id), r}
	}
	slices.SortFunc(tied, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for i, t := range tied {
		refs[i] = t.ref
	}
}

// readKids appends the nodes ids were at the freeze to fr.nodes, and
// their refs to fr.refs, under one lock: a 3M-znode walk took the lock
// and read each leaf's slot twice, once for its name and once for the
// rest. The price is memory while the walk is in a directory: about 120
// bytes per child of each directory on the stack.
func (f *Frozen) readKids(ids []nodeID, fr *walkFrame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		n := f.nodeLocked(id)
		ref := newChildRef(recName(f.bufs, n.buf, n.nameLen), id)
		ref.at = uint32(len(fr.nodes))
		fr.refs = append(fr.refs, ref)
		fr.nodes = append(fr.nodes, n)
	}
}

// name returns id's name as it was at the freeze. A name never changes
// while its node lives, and a record is never written after it is made,
// so the string stays valid.
func (f *Frozen) name(id nodeID) string {
	f.mu.Lock()
	n := f.nodeLocked(id)
	f.mu.Unlock()
	return recName(f.bufs, n.buf, n.nameLen)
}

// walkFrame is one directory on the walk's stack: its children as they
// were at the freeze, their refs in name order, the next to visit, and
// the length of its path in the buffer.
type walkFrame struct {
	nodes []frozenNode
	refs  []childRef
	next  int
	plen  int // 0 for the root, so that its children are "/name"
}

// Walk calls fn for every node of the view, depth first, a parent before
// its children and siblings in sorted order, starting at "/", and stops at
// the first error fn returns. path is valid only during the call; the
// Node's Data and ACL are shared with the tree, read-only. It is meant for
// one goroutine at a time, other than the writer's. yield, if not nil, is
// called between nodes, for pacing.
func (f *Frozen) Walk(fn func(path []byte, n Node) error, yield func()) error {
	var path []byte
	var stack []walkFrame
	var ids []nodeID
	var scratch []childRef
	// visit calls fn for id, read as n, whose parent's path is
	// path[:plen] (0 for the root's children), and pushes its children.
	visit := func(id nodeID, n frozenNode, plen int) error {
		if f.closed.Load() {
			return ErrFrozenClosed
		}
		if id != rootID {
			path = append(append(path[:plen], '/'), recName(f.bufs, n.buf, n.nameLen)...)
		}
		node := Node{Data: recData(f.bufs, n.buf, n.nameLen, n.dataLen), ACL: n.acl.acl, ACLID: n.acl.id, Stat: n.stat, NumChildren: int32(n.numKids)}
		if err := fn(path, node); err != nil {
			return err
		}
		if n.numKids > 0 {
			// A popped frame's buffers are reused by the next frame at
			// its depth.
			if len(stack) < cap(stack) {
				stack = stack[:len(stack)+1]
			} else {
				stack = append(stack, walkFrame{})
			}
			fr := &stack[len(stack)-1]
			fr.nodes, fr.refs, fr.next, fr.plen = fr.nodes[:0], fr.refs[:0], 0, len(path)
			if fr.plen == len(Root) {
				fr.plen = 0 // the root's children are "/name"
			}
			ids = f.kidsOf(id, ids[:0])
			f.readKids(ids, fr)
			sortKids(fr.refs, &scratch, f.name)
		}
		if yield != nil {
			yield()
		}
		return nil
	}
	path = append(path, Root...)
	f.mu.Lock()
	root := f.nodeLocked(rootID)
	f.mu.Unlock()
	if err := visit(rootID, root, 0); err != nil {
		return err
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.refs) {
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.refs[top.next]
		top.next++
		if err := visit(c.id, top.nodes[c.at], top.plen); err != nil {
			return err
		}
	}
	return nil
}
