package tree

import (
	"slices"
	"strings"
	"sync"

	"github.com/zoohq/zoo/internal/jute"
)

// openACL is world:anyone with every permission (ZooDefs.Ids.OPEN_ACL_UNSAFE),
// the ACL of the system nodes.
var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// readACL is world:anyone read-only (READ_ACL_UNSAFE), the ACL of
// /zookeeper/config since ZOOKEEPER-2014.
var readACL = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// Tree is the data tree. The zero value is not usable; call New.
type Tree struct {
	nodes      slab
	index      pathIndex
	bufs       bufStore
	names      nameCache
	acls       aclTable
	ephemerals map[int64]map[nodeID]struct{} // session -> its ephemeral nodes
	containers map[nodeID]struct{}
	ttls       map[nodeID]struct{}
	quotas     map[string]struct{} // paths with a zookeeper_limits node
	dataSize   int64               // sum of len(path)+len(data)
	// apacheDigest is the running sum of nodeApacheDigest (ApacheDigest).
	apacheDigest int64
	digestBuf    []byte // nodeApacheDigest's scratch: a path and a stat
	// gen counts Freeze calls; frozen lists the views that may still be
	// walked (see Frozen).
	gen    uint32
	frozen []*Frozen
	// lastRestored is the node Restore added last, where it looks for
	// the next one's parent first.
	lastRestored nodeID
	lastDepth    int // lastRestored's depth
	// restoreErr is what flushIndex found wrong with a restore (a path
	// restored twice), for Restored to report.
	restoreErr error
}

// nameCache keeps the sorted child names of large directories between
// changes: lock and queue recipes call getChildren on a large directory
// after every change, and a copy is cheaper than a walk and a sort.
// Readers share the tree (the server holds a read lock) and fill it
// concurrently, hence the mutex; the writer forgets a directory's entry
// when its children change. It is bounded: when full it starts over.
type nameCache struct {
	mu sync.Mutex
	m  map[nodeID][]string // guarded by mu
}

const (
	minCachedKids = 8    // smaller directories are sorted on each read
	maxCachedDirs = 4096 // entries before the cache starts over
)

func (c *nameCache) forget(id nodeID) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

func (c *nameCache) get(id nodeID) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names, ok := c.m[id]
	return names, ok
}

func (c *nameCache) put(id nodeID, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedDirs {
		c.m = make(map[nodeID][]string)
	}
	c.m[id] = names
}

// New returns a tree holding the system nodes, as a fresh Apache 3.8
// server has them: "/", "/zookeeper" and "/zookeeper/quota" with empty
// data and an open ACL; "/zookeeper/config" with empty data, a read-only
// ACL and aversion -1 (Apache sets its ACL with setACL(..., -1)). All their
// zxids and times are 0.
func New() *Tree {
	t := &Tree{
		index:      newPathIndex(),
		bufs:       newBufStore(),
		acls:       newACLTable(),
		ephemerals: make(map[int64]map[nodeID]struct{}),
		containers: make(map[nodeID]struct{}),
		ttls:       make(map[nodeID]struct{}),
		quotas:     make(map[string]struct{}),
	}
	root := t.nodes.alloc()
	t.setBuf(root, "", []byte{})
	n := t.nodes.at(root)
	n.acl = t.acls.intern(openACL)
	t.indexAdd(Root, root)
	t.dataSize = int64(len(Root))
	t.redigest(Root, n)
	t.addSystemNode(ProcPath, openACL)
	t.addSystemNode(QuotaPath, openACL)
	cfg := t.addSystemNode(ConfigPath, readACL)
	t.nodes.at(cfg).stat.Aversion = -1 // outside the digest (/zookeeper/)
	return t
}

// addSystemNode links a node without touching its parent's stat, as the
// DataTree constructor does: the root reports cversion -1 and /zookeeper
// cversion -2 on a fresh server.
func (t *Tree) addSystemNode(path string, acl []jute.ACL) nodeID {
	parent, name, _ := Split(path)
	return t.link(t.lookup(parent), name, path, []byte{}, t.acls.intern(acl), StatPersisted{})
}

// link adds a node under parent, to the path index and to the size
// count, and returns it.
func (t *Tree) link(parent nodeID, name, path string, data []byte, acl uint32, st StatPersisted) nodeID {
	t.flushIndex()
	return t.linkHashed(parent, name, path, t.index.hash(path), data, acl, st)
}

// linkHashed is link with the path's hash h already computed, and the
// index flushed.
func (t *Tree) linkHashed(parent nodeID, name, path string, h uint64, data []byte, acl uint32, st StatPersisted) nodeID {
	id := t.linkNode(parent, name, path, data, acl, st)
	t.index.insert(h, id)
	return id
}

// linkNode is link but for the index.
func (t *Tree) linkNode(parent nodeID, name, path string, data []byte, acl uint32, st StatPersisted) nodeID {
	t.touch(parent)
	id := t.nodes.alloc()
	t.setBuf(id, name, data)
	n := t.nodes.at(id)
	n.acl, n.stat, n.gen = acl, st, t.gen
	t.addKid(parent, id)
	t.dataSize += int64(len(path) + n.dataLength())
	t.redigest(path, n)
	return id
}

// get returns the node at path, or nil.
func (t *Tree) get(path string) *node {
	if id := t.lookup(path); id != 0 {
		return t.nodes.at(id)
	}
	return nil
}

// Exists reports whether path names a node.
func (t *Tree) Exists(path string) bool { return t.lookup(path) != 0 }

// Stat returns the stat of path as Apache reports it, and whether the node
// exists.
func (t *Tree) Stat(path string) (jute.Stat, bool) {
	n := t.get(path)
	if n == nil {
		return jute.Stat{}, false
	}
	return n.report(), true
}

// Get returns the data and stat of path, or jute.NoNode. The data is
// shared with the tree: callers must not modify it. A later SetData
// replaces the slice rather than writing into it, so a slice once returned
// stays valid.
func (t *Tree) Get(path string) ([]byte, jute.Stat, error) {
	data, stat, _, err := t.GetChecked(path)
	return data, stat, err
}

// GetChecked is Get with the node's ACL, for a read that checks READ
// first: one lookup of path where ACL then Get took two (a lookup was 5%
// of the server's CPU at 100% reads). The ACL is shared with the tree:
// callers must not modify it.
func (t *Tree) GetChecked(path string) ([]byte, jute.Stat, []jute.ACL, error) {
	n := t.get(path)
	if n == nil {
		return nil, jute.Stat{}, nil, jute.NoNode
	}
	return t.bufs.data(n), n.report(), t.acls.get(n.acl).acl, nil
}

// Children returns the names of path's children in sorted order, in a new
// slice, and path's stat, or jute.NoNode. Apache returns them in hash
// order; any order is correct, and a sorted one is reproducible and is
// what tests written against Apache's small-name hash order expect.
func (t *Tree) Children(path string) ([]string, jute.Stat, error) {
	id := t.lookup(path)
	if id == 0 {
		return nil, jute.Stat{}, jute.NoNode
	}
	n := t.nodes.at(id)
	return slices.Clone(t.sortedNames(id)), n.report(), nil
}

// sortedNames returns id's child names in sorted order, shared with the
// cache: do not modify.
func (t *Tree) sortedNames(id nodeID) []string {
	n := t.nodes.at(id)
	if n.numKids == 0 {
		return nil
	}
	if names, ok := t.names.get(id); ok {
		return names
	}
	// One string holds every name, so the cached list pins no chunk of
	// the store after its records move.
	var size int
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		size += int(t.nodes.at(c).nameLen)
	}
	var all strings.Builder
	all.Grow(size)
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		all.WriteString(t.bufs.name(t.nodes.at(c)))
	}
	s := all.String()
	names := make([]string, 0, n.numKids)
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		l := int(t.nodes.at(c).nameLen)
		names = append(names, s[:l])
		s = s[l:]
	}
	slices.Sort(names)
	if len(names) >= minCachedKids {
		t.names.put(id, names)
	}
	return names
}

// ACL returns the ACL and stat of path, or jute.NoNode. The slice is shared
// with the tree: callers must not modify it.
func (t *Tree) ACL(path string) ([]jute.ACL, jute.Stat, error) {
	n := t.get(path)
	if n == nil {
		return nil, jute.Stat{}, jute.NoNode
	}
	return t.acls.get(n.acl).acl, n.report(), nil
}

// AllChildrenNumber returns the number of descendants of path (children,
// their children, and so on), or jute.NoNode. For "/" that is every node
// but the root, /zookeeper and its children included
// (DataTree.getAllChildrenNumber).
func (t *Tree) AllChildrenNumber(path string) (int, error) {
	id := t.lookup(path)
	if id == 0 {
		return 0, jute.NoNode
	}
	if id == rootID {
		return t.nodes.count - 1, nil
	}
	return t.countDescendants(id), nil
}

func (t *Tree) countDescendants(id nodeID) int {
	n := t.nodes.at(id)
	c := int(n.numKids)
	for k := n.firstChild; k != 0; k = t.nodes.at(k).next {
		c += t.countDescendants(k)
	}
	return c
}

// Ephemerals returns the paths of the ephemeral nodes owned by session, in
// sorted order.
func (t *Tree) Ephemerals(session int64) []string {
	return t.sortedPaths(t.ephemerals[session])
}

func (t *Tree) sortedPaths(set map[nodeID]struct{}) []string {
	paths := make([]string, 0, len(set))
	for id := range set {
		paths = append(paths, t.pathOf(id))
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
func (t *Tree) NodeCount() int { return t.nodes.count }

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
	// Ref is the node, for a change of path to find it without a lookup
	// (see Ref).
	Ref Ref
}

// Lookup returns the persisted state of path and whether it exists.
func (t *Tree) Lookup(path string) (Info, bool) {
	id := t.lookup(path)
	if id == 0 {
		return Info{}, false
	}
	n := t.nodes.at(id)
	return Info{Stat: n.stat, NumChildren: n.numChildren(), ACL: t.acls.get(n.acl).acl, Data: t.bufs.data(n), Ref: Ref{id}}, true
}
