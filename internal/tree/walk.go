package tree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
)

// Node is a read-only view of a znode, handed to Walk. Data and ACL are
// shared with the tree: do not modify them.
type Node struct {
	Data        []byte
	ACL         []jute.ACL
	ACLID       uint64 // the ACL's id in the tree's ACL table, shared by equal ACLs
	Stat        StatPersisted
	NumChildren int32
}

// Walk calls fn for every node, depth first, a parent before its children
// and siblings in sorted order, starting at "/". It stops when fn returns
// false. fn must not change the tree.
func (t *Tree) Walk(fn func(path string, n Node) bool) {
	t.walk(Root, t.nodes[Root], fn)
}

func (t *Tree) walk(path string, n *node, fn func(string, Node) bool) bool {
	view := Node{Data: n.getData(), ACL: n.acl.acl, ACLID: n.acl.id, Stat: n.stat, NumChildren: n.numChildren()}
	if !fn(path, view) {
		return false
	}
	// A copy: fn may read Children, which can replace the cache.
	for _, name := range slices.Clone(n.children.names()) {
		child, _ := n.children.get(name)
		if !t.walk(Join(path, name), child, fn) {
			return false
		}
	}
	return true
}

// Digest returns a hash of the whole tree: every node's path, data (nil
// told from empty), persisted stat and ACL. It is independent of the order
// in which the nodes were created and of ACL table ids, so two servers that
// applied the same txns have the same digest. It is a sum of per-node
// hashes (like Apache's DigestCalculator), so it needs no sorting.
func (t *Tree) Digest() uint64 {
	var sum uint64
	var buf []byte
	for path, n := range t.nodes {
		buf = appendNodeKey(buf[:0], path, n)
		sum += fnv64a(buf)
	}
	return sum
}

func appendNodeKey(b []byte, path string, n *node) []byte {
	b = append(b, path...)
	b = append(b, 0)
	if n.getData() == nil {
		b = binary.BigEndian.AppendUint32(b, ^uint32(0))
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n.getData())))
		b = append(b, n.getData()...)
	}
	s := &n.stat
	for _, v := range [...]int64{s.Czxid, s.Mzxid, s.Ctime, s.Mtime, s.EphemeralOwner, s.Pzxid} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range [...]int32{s.Version, s.Cversion, s.Aversion} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return binary.BigEndian.AppendUint64(b, n.acl.hash)
}

// fnv64a is FNV-1a, inline so that hashing a node allocates nothing.
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Restore puts a node read from a snapshot into the tree: its parent must
// be there already (a snapshot lists parents first). An existing node (the
// system nodes of New) takes the restored data, ACL and stat. Quota
// tracking is rebuilt by RebuildQuotas once every node is in. It fails
// with jute.BadArguments for an invalid path and jute.NoNode for a missing
// parent. The tree keeps data and copies acl.
func (t *Tree) Restore(path string, data []byte, acl []jute.ACL, st StatPersisted) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	if n, ok := t.nodes[path]; ok {
		t.unindex(path, n.stat.EphemeralOwner)
		t.replaceData(path, n, data) // keeps the digest in step
		t.undigest(path, n)
		old := n.acl
		n.acl = t.acls.intern(acl)
		t.acls.release(old)
		n.stat = st
		t.redigest(path, n)
		t.index(path, st.EphemeralOwner)
		return nil
	}
	parentPath, name, _ := Split(path)
	parent, ok := t.nodes[parentPath]
	if !ok {
		return jute.NoNode
	}
	n := newNode(data, t.acls.intern(acl), st)
	t.link(parent, name, path, n)
	t.index(path, st.EphemeralOwner)
	return nil
}

// RebuildQuotas finds every quota under /zookeeper/quota and recounts its
// usage into its stats node, as Apache does after loading a snapshot
// (DataTree.setupQuota): a quota is a childless zookeeper_limits node.
func (t *Tree) RebuildQuotas() {
	clear(t.quotas)
	var found []string
	t.walk(QuotaPath, t.nodes[QuotaPath], func(path string, n Node) bool {
		suffix := "/" + LimitNode
		if n.NumChildren == 0 && strings.HasSuffix(path, suffix) {
			found = append(found, path[len(QuotaPath):strings.Index(path, suffix)])
		}
		return true
	})
	for _, p := range found {
		t.quotas[p] = struct{}{}
		t.recountQuota(p)
	}
}

// ErrInconsistent means CheckInvariants found the tree's indexes or counts
// out of step with its nodes: a bug in the tree.
var ErrInconsistent = errors.New("tree: inconsistent")

// CheckInvariants verifies that the path map, the children sets, the size
// count, the ACL reference counts and the ephemeral, container and TTL
// indexes agree. It is for tests and invariant builds: it walks the whole
// tree.
func (t *Tree) CheckInvariants() error {
	if err := t.checkLinks(); err != nil {
		return err
	}
	if err := t.checkIndexes(); err != nil {
		return err
	}
	if err := t.checkApacheDigest(); err != nil {
		return err
	}
	return t.checkACLRefs()
}

func (t *Tree) checkLinks() error {
	var size int64
	for path, n := range t.nodes {
		size += int64(len(path) + len(n.getData()))
		if path == Root {
			continue
		}
		parentPath, name, _ := Split(path)
		parent, ok := t.nodes[parentPath]
		if child, _ := parent.children.get(name); !ok || child != n {
			return fmt.Errorf("%w: %s is not linked to its parent", ErrInconsistent, path)
		}
		if err := checkKids(path, n.children); err != nil {
			return err
		}
	}
	if size != t.dataSize {
		return fmt.Errorf("%w: data size %d, counted %d", ErrInconsistent, t.dataSize, size)
	}
	return nil
}

// checkKids verifies that a cached name list matches the set.
func checkKids(path string, k *kids) error {
	if k == nil || k.sorted.Load() == nil {
		return nil
	}
	sorted := *k.sorted.Load()
	if len(sorted) != len(k.byName) || !slices.IsSorted(sorted) {
		return fmt.Errorf("%w: stale child list of %s", ErrInconsistent, path)
	}
	for _, name := range sorted {
		if _, ok := k.byName[name]; !ok {
			return fmt.Errorf("%w: stale child %s of %s", ErrInconsistent, name, path)
		}
	}
	return nil
}

func (t *Tree) checkIndexes() error {
	eph, cont, ttl := 0, 0, 0
	for path, n := range t.nodes {
		owner := n.stat.EphemeralOwner
		var in bool
		switch KindOf(owner) {
		case Persistent:
			continue
		case Ephemeral:
			_, in = t.ephemerals[owner][path]
			eph++
		case Container:
			_, in = t.containers[path]
			cont++
		case TTL:
			_, in = t.ttls[path]
			ttl++
		}
		if !in {
			return fmt.Errorf("%w: %s missing from the %v index", ErrInconsistent, path, KindOf(owner))
		}
	}
	if eph != t.EphemeralCount() || cont != len(t.containers) || ttl != len(t.ttls) {
		return fmt.Errorf("%w: index sizes %d/%d/%d, nodes %d/%d/%d", ErrInconsistent,
			t.EphemeralCount(), len(t.containers), len(t.ttls), eph, cont, ttl)
	}
	return nil
}

func (t *Tree) checkACLRefs() error {
	refs := make(map[*aclEntry]int)
	for _, n := range t.nodes {
		refs[n.acl]++
	}
	for e, c := range refs {
		if e.refs != c || t.acls.byKey[e.key] != e {
			return fmt.Errorf("%w: ACL %d has %d refs, %d nodes", ErrInconsistent, e.id, e.refs, c)
		}
	}
	if len(refs) != len(t.acls.byKey) {
		return fmt.Errorf("%w: %d ACLs in the table, %d in use", ErrInconsistent, len(t.acls.byKey), len(refs))
	}
	return nil
}
