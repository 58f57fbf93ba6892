package tree

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/zoohq/zoo/internal/jute"
)

// openACL is world:anyone with every permission (ZooDefs.Ids.OPEN_ACL_UNSAFE),
// the ACL of the system nodes.
var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// readACL is world:anyone read-only (READ_ACL_UNSAFE), the ACL of
// /zookeeper/config since ZOOKEEPER-2014.
var readACL = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// node is one znode. Its path is its key in Tree.nodes; children maps each
// child's name (a substring of the child's path) to the child.
//
// Its layout is kept to 96 bytes, a size class of Go's allocator (112
// with a []byte for the data): a 3M-znode tree is mostly nodes.
type node struct {
	dataP    *byte  // the data, as a []byte without its capacity (see setData)
	dataLen  uint32 // jute.maxbuffer bounds data far below 4 GiB
	gen      uint32 // the newest Frozen view it was saved for, or created under
	acl      *aclEntry
	stat     StatPersisted
	children *kids // nil until the first child
}

// emptyData is what an empty, non-nil data points at: nil and empty
// differ on the wire, and both are kept.
var emptyData byte

func (n *node) setData(b []byte) {
	n.dataLen = uint32(len(b))
	switch {
	case b == nil:
		n.dataP = nil
	case len(b) == 0:
		n.dataP = &emptyData
	default:
		n.dataP = unsafe.SliceData(b)
	}
}

// getData returns the data, shared: callers must not modify it.
func (n *node) getData() []byte {
	if n.dataP == nil {
		return nil
	}
	return unsafe.Slice(n.dataP, n.dataLen)
}

func newNode(data []byte, acl *aclEntry, st StatPersisted) *node {
	n := &node{acl: acl, stat: st}
	n.setData(data)
	return n
}

func (n *node) numChildren() int32 { return int32(n.children.len()) }

// kids is a node's set of children by name, with the sorted list of names
// cached between changes: lock and queue recipes call getChildren on a
// large directory after every change, and a copy is cheaper than a sort.
//
// Readers share the tree (the server holds a read lock), so the cache is
// an atomic pointer: concurrent readers may each build the list, and each
// stores a complete one. Writers, which hold the tree alone, reset it.
type kids struct {
	byName map[string]*node
	sorted atomic.Pointer[[]string] // nil when stale
}

func (k *kids) len() int {
	if k == nil {
		return 0
	}
	return len(k.byName)
}

func (k *kids) get(name string) (*node, bool) {
	if k == nil {
		return nil, false
	}
	n, ok := k.byName[name]
	return n, ok
}

// names returns the sorted names, shared with the cache: do not modify.
func (k *kids) names() []string {
	if k == nil || len(k.byName) == 0 {
		return nil
	}
	if p := k.sorted.Load(); p != nil {
		return *p
	}
	sorted := make([]string, 0, len(k.byName))
	for name := range k.byName {
		sorted = append(sorted, name)
	}
	slices.Sort(sorted)
	k.sorted.Store(&sorted)
	return sorted
}

func (k *kids) add(name string, n *node) {
	k.byName[name] = n
	k.sorted.Store(nil)
}

func (k *kids) remove(name string) {
	delete(k.byName, name)
	k.sorted.Store(nil)
}

func (n *node) report() jute.Stat {
	return n.stat.Report(n.numChildren(), int32(len(n.getData())))
}

// Tree is the data tree. The zero value is not usable; call New.
type Tree struct {
	nodes      map[string]*node
	acls       aclTable
	ephemerals map[int64]map[string]struct{} // session -> its ephemeral paths
	containers map[string]struct{}
	ttls       map[string]struct{}
	quotas     map[string]struct{} // paths with a zookeeper_limits node
	dataSize   int64               // sum of len(path)+len(data)
	// apacheDigest is the running sum of nodeApacheDigest (ApacheDigest).
	apacheDigest int64
	// gen counts Freeze calls; frozen lists the views that may still be
	// walked (see Frozen).
	gen    uint32
	frozen []*Frozen
}

// New returns a tree holding the system nodes, as a fresh Apache 3.8
// server has them: "/", "/zookeeper" and "/zookeeper/quota" with empty
// data and an open ACL; "/zookeeper/config" with empty data, a read-only
// ACL and aversion -1 (Apache sets its ACL with setACL(..., -1)). All their
// zxids and times are 0.
func New() *Tree {
	t := &Tree{
		nodes:      make(map[string]*node),
		acls:       newACLTable(),
		ephemerals: make(map[int64]map[string]struct{}),
		containers: make(map[string]struct{}),
		ttls:       make(map[string]struct{}),
		quotas:     make(map[string]struct{}),
	}
	t.nodes[Root] = newNode([]byte{}, t.acls.intern(openACL), StatPersisted{})
	t.dataSize = int64(len(Root))
	t.redigest(Root, t.nodes[Root])
	t.addSystemNode(ProcPath, openACL)
	t.addSystemNode(QuotaPath, openACL)
	cfg := t.addSystemNode(ConfigPath, readACL)
	cfg.stat.Aversion = -1 // outside the digest (/zookeeper/)
	return t
}

// addSystemNode links a node without touching its parent's stat, as the
// DataTree constructor does: the root reports cversion -1 and /zookeeper
// cversion -2 on a fresh server.
func (t *Tree) addSystemNode(path string, acl []jute.ACL) *node {
	parent, name, _ := Split(path)
	n := newNode([]byte{}, t.acls.intern(acl), StatPersisted{})
	t.link(t.nodes[parent], name, path, n)
	return n
}

// link adds n under parent and to the path map, keeping the size count.
func (t *Tree) link(parent *node, name, path string, n *node) {
	t.touch(parent)
	n.gen = t.gen
	if parent.children == nil {
		parent.children = &kids{byName: make(map[string]*node, 4)}
	}
	parent.children.add(name, n)
	t.nodes[path] = n
	t.dataSize += int64(len(path) + len(n.getData()))
	t.redigest(path, n)
}

// Exists reports whether path names a node.
func (t *Tree) Exists(path string) bool {
	_, ok := t.nodes[path]
	return ok
}

// Stat returns the stat of path as Apache reports it, and whether the node
// exists.
func (t *Tree) Stat(path string) (jute.Stat, bool) {
	n, ok := t.nodes[path]
	if !ok {
		return jute.Stat{}, false
	}
	return n.report(), true
}

// Get returns the data and stat of path, or jute.NoNode. The data is
// shared with the tree: callers must not modify it. A later SetData
// replaces the slice rather than writing into it, so a slice once returned
// stays valid.
func (t *Tree) Get(path string) ([]byte, jute.Stat, error) {
	n, ok := t.nodes[path]
	if !ok {
		return nil, jute.Stat{}, jute.NoNode
	}
	return n.getData(), n.report(), nil
}

// Children returns the names of path's children in sorted order, in a new
// slice, and path's stat, or jute.NoNode. Apache returns them in hash
// order; any order is correct, and a sorted one is reproducible and is
// what tests written against Apache's small-name hash order expect.
func (t *Tree) Children(path string) ([]string, jute.Stat, error) {
	n, ok := t.nodes[path]
	if !ok {
		return nil, jute.Stat{}, jute.NoNode
	}
	return slices.Clone(n.children.names()), n.report(), nil
}

// ACL returns the ACL and stat of path, or jute.NoNode. The slice is shared
// with the tree: callers must not modify it.
func (t *Tree) ACL(path string) ([]jute.ACL, jute.Stat, error) {
	n, ok := t.nodes[path]
	if !ok {
		return nil, jute.Stat{}, jute.NoNode
	}
	return n.acl.acl, n.report(), nil
}

// AllChildrenNumber returns the number of descendants of path (children,
// their children, and so on), or jute.NoNode. For "/" that is every node
// but the root, /zookeeper and its children included
// (DataTree.getAllChildrenNumber).
func (t *Tree) AllChildrenNumber(path string) (int, error) {
	n, ok := t.nodes[path]
	if !ok {
		return 0, jute.NoNode
	}
	if path == Root {
		return len(t.nodes) - 1, nil
	}
	return countDescendants(n), nil
}

func countDescendants(n *node) int {
	c := n.children.len()
	if c == 0 {
		return 0
	}
	for _, child := range n.children.byName {
		c += countDescendants(child)
	}
	return c
}

// Ephemerals returns the paths of the ephemeral nodes owned by session, in
// sorted order.
func (t *Tree) Ephemerals(session int64) []string {
	set := t.ephemerals[session]
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// EphemeralCount returns the number of ephemeral nodes of all sessions
// (mntr's zk_ephemerals_count).
func (t *Tree) EphemeralCount() int {
	c := 0
	for _, set := range t.ephemerals {
		c += len(set)
	}
	return c
}

// NodeCount returns the number of znodes, the root included. Apache's
// zk_znode_count is one more: its path map holds the root twice, under ""
// and "/".
func (t *Tree) NodeCount() int { return len(t.nodes) }

// ApproximateDataSize returns the sum over all nodes of the length of the
// path and of the data (DataTree.cachedApproximateDataSize, mntr's
// zk_approximate_data_size).
func (t *Tree) ApproximateDataSize() int64 { return t.dataSize }

// Info is what prep needs to know of a node to judge a request against it.
// ACL and Data are shared with the tree: do not modify them.
type Info struct {
	Stat        StatPersisted
	NumChildren int32
	ACL         []jute.ACL
	Data        []byte
}

// Lookup returns the persisted state of path and whether it exists.
func (t *Tree) Lookup(path string) (Info, bool) {
	n, ok := t.nodes[path]
	if !ok {
		return Info{}, false
	}
	return Info{Stat: n.stat, NumChildren: n.numChildren(), ACL: n.acl.acl, Data: n.getData()}, true
}
