package tree

import (
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
	root   *node
	closed atomic.Bool

	mu    sync.Mutex
	saved map[*node]*savedNode // guarded by mu
}

// savedNode is a node as it was at the freeze.
type savedNode struct {
	data []byte
	acl  *aclEntry
	stat StatPersisted
	kids []childRef // unsorted
}

type childRef struct {
	name string
	n    *node
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
		for _, n := range t.nodes {
			n.gen = 0
		}
		t.gen = 0
	}
	t.gen++
	f := &Frozen{gen: t.gen, root: t.nodes[Root], saved: make(map[*node]*savedNode)}
	t.frozen = append(t.frozen, f)
	return f
}

// Close ends the view: the writer stops saving nodes for it, and Walk
// fails. It is safe to call more than once and from any goroutine.
func (f *Frozen) Close() {
	f.closed.Store(true)
}

// touch saves n, if it is older than an open view, into every such view
// before the writer changes it. Every method that changes a node's data,
// ACL, stat or children calls it first.
func (t *Tree) touch(n *node) {
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
			s = &savedNode{data: n.getData(), acl: n.acl, stat: n.stat, kids: listKids(n.children)}
		}
		f.mu.Lock()
		if _, ok := f.saved[n]; !ok {
			f.saved[n] = s
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

func listKids(k *kids) []childRef {
	if k == nil || len(k.byName) == 0 {
		return nil
	}
	refs := make([]childRef, 0, len(k.byName))
	for name, n := range k.byName {
		refs = append(refs, childRef{name, n})
	}
	return refs
}

// view returns n as it was at the freeze. Its kids are a private copy.
func (f *Frozen) view(n *node) savedNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.saved[n]; ok {
		v := *s
		v.kids = slices.Clone(s.kids) // the walker sorts its copy
		return v
	}
	return savedNode{data: n.getData(), acl: n.acl, stat: n.stat, kids: listKids(n.children)}
}

// walkFrame is one directory on the walk's stack: its children in sorted
// order, the next to visit, and the length of its path in the buffer.
type walkFrame struct {
	kids []childRef
	next int
	plen int // 0 for the root, so that its children are "/name"
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
	visit := func(n *node) error {
		if f.closed.Load() {
			return ErrFrozenClosed
		}
		v := f.view(n)
		if err := fn(path, Node{Data: v.data, ACL: v.acl.acl, ACLID: v.acl.id, Stat: v.stat, NumChildren: int32(len(v.kids))}); err != nil {
			return err
		}
		if len(v.kids) > 0 {
			slices.SortFunc(v.kids, func(a, b childRef) int { return strings.Compare(a.name, b.name) })
			plen := len(path)
			if plen == len(Root) {
				plen = 0 // the root's children are "/name"
			}
			stack = append(stack, walkFrame{kids: v.kids, plen: plen})
		}
		if yield != nil {
			yield()
		}
		return nil
	}
	path = append(path, Root...)
	if err := visit(f.root); err != nil {
		return err
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.kids) {
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.kids[top.next]
		top.next++
		path = append(append(path[:top.plen], '/'), c.name...)
		if err := visit(c.n); err != nil {
			return err
		}
	}
	return nil
}
