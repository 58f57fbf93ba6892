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
	t.walk(Root, rootID, fn)
}

func (t *Tree) walk(path string, id nodeID, fn func(string, Node) bool) bool {
	n := t.nodes.at(id)
	e := t.acls.get(n.acl)
	view := Node{Data: t.bufs.data(n), ACL: e.acl, ACLID: e.id, Stat: n.stat, NumChildren: n.numChildren()}
	if !fn(path, view) {
		return false
	}
	if n.numKids == 0 {
		return true
	}
	// Ids, sorted by name: fn may read Children, which can replace the
	// cache.
	refs := make([]childRef, 0, n.numKids)
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		refs = append(refs, newChildRef(t.nameOf(c), c))
	}
	sortKids(refs, new([]childRef), t.nameOf)
	for _, c := range refs {
		if !t.walk(Join(path, t.nameOf(c.id)), c.id, fn) {
			return false
		}
	}
	return true
}

// nameOf is id's name.
func (t *Tree) nameOf(id nodeID) string { return t.bufs.name(t.nodes.at(id)) }

// each calls fn for every node with its path, in no particular order.
func (t *Tree) each(fn func(path string, id nodeID, n *node)) {
	var rec func(path string, id nodeID)
	rec = func(path string, id nodeID) {
		n := t.nodes.at(id)
		fn(path, id, n)
		for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
			rec(Join(path, t.bufs.name(t.nodes.at(c))), c)
		}
	}
	rec(Root, rootID)
}

// Digest returns a hash of the whole tree: every node's path, data (nil
// told from empty), persisted stat and ACL. It is independent of the order
// in which the nodes were created and of ACL table ids, so two servers that
// applied the same txns have the same digest. It is a sum of per-node
// hashes (like Apache's DigestCalculator), so it needs no sorting.
func (t *Tree) Digest() uint64 {
	var sum uint64
	var buf []byte
	t.each(func(path string, _ nodeID, n *node) {
		buf = t.appendNodeKey(buf[:0], path, n)
		sum += fnv64a(buf)
	})
	return sum
}

func (t *Tree) appendNodeKey(b []byte, path string, n *node) []byte {
	b = append(b, path...)
	b = append(b, 0)
	if t.bufs.data(n) == nil {
		b = binary.BigEndian.AppendUint32(b, ^uint32(0))
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(t.bufs.data(n))))
		b = append(b, t.bufs.data(n)...)
	}
	s := &n.stat
	for _, v := range [...]int64{s.Czxid, s.Mzxid, s.Ctime, s.Mtime, s.EphemeralOwner, s.Pzxid} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range [...]int32{s.Version, s.Cversion, s.Aversion} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return binary.BigEndian.AppendUint64(b, t.acls.get(n.acl).hash)
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
// system nodes of New) takes the restored data, ACL and stat. Once every
// node is in, Restored finishes the load; until then the tree is the
// loader's alone (its index is completed by the next lookup, whoever
// makes it). It fails with jute.BadArguments for an invalid path and
// jute.NoNode for a missing parent. The tree copies data and acl and
// keeps none of its arguments, so a loader may pass a path and data in
// buffers it reuses.
func (t *Tree) Restore(path string, data []byte, acl []jute.ACL, st StatPersisted) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	if t.restoreErr != nil {
		return t.restoreErr
	}
	// The node is new unless it was in the tree before the load (the
	// nodes it restored are not in the index yet, see pathIndex): a path
	// listed twice is caught when they go in.
	h := t.index.hash(path)
	if id := t.find(h, path); id != 0 {
		n := t.nodes.at(id)
		t.unindexKind(id, n.stat.EphemeralOwner)
		t.replaceData(path, id, data) // keeps the digest in step
		t.undigest(n)
		old := n.acl
		n.acl = t.acls.intern(acl)
		t.acls.release(old)
		n.stat = st
		t.redigest(path, n)
		t.indexKind(id, st.EphemeralOwner)
		return nil
	}
	parentPath, name, _ := Split(path)
	pid := t.restoredParent(parentPath)
	if pid == 0 {
		return jute.NoNode
	}
	id := t.linkNode(pid, name, path, data, t.acls.intern(acl), st)
	t.index.pending = append(t.index.pending, entry(h, id))
	t.indexKind(id, st.EphemeralOwner)
	t.lastRestored, t.lastDepth = id, depth(path)
	return nil
}

// restoredParent finds parentPath for Restore. A snapshot is a
// depth-first walk, so the parent is the node restored last or the one
// of its ancestors as deep as parentPath: walking up to it and matching
// names is cheaper than hashing the path and probing the index, and the
// index does not hold the restored nodes yet. Anything else (another
// order) falls back to the index.
func (t *Tree) restoredParent(parentPath string) nodeID {
	id := t.lastRestored
	if id != 0 && (t.nodes.at(id).parent != 0 || id == rootID) { // not freed since
		up := t.lastDepth - depth(parentPath)
		for ; up > 0 && id != rootID; up-- {
			id = t.nodes.at(id).parent
		}
		if up == 0 && t.pathIs(id, parentPath) {
			return id
		}
	}
	return t.lookup(parentPath)
}

// depth is how many names path has: 0 for the root.
func depth(path string) int {
	if path == Root {
		return 0
	}
	return strings.Count(path, "/")
}

// Restored finishes a load by Restore: it puts the restored nodes into
// the path index, and rebuilds quota tracking. It fails if the load
// listed a path twice (jute.NodeExists); the tree is then not to be used.
func (t *Tree) Restored() error {
	t.flushIndex()
	if err := t.restoreErr; err != nil {
		return err
	}
	t.RebuildQuotas()
	return nil
}

// RebuildQuotas finds every quota under /zookeeper/quota and recounts its
// usage into its stats node, as Apache does after loading a snapshot
// (DataTree.setupQuota): a quota is a childless zookeeper_limits node.
func (t *Tree) RebuildQuotas() {
	clear(t.quotas)
	var found []string
	t.walk(QuotaPath, t.lookup(QuotaPath), func(path string, n Node) bool {
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
	if err := t.checkBufs(); err != nil {
		return err
	}
	return t.checkACLRefs()
}

// checkBufs verifies that every node's record names it and has its
// length, that each chunk's live count adds up, and that no chunk but the one
// being filled is sparse without waiting for compaction.
func (t *Tree) checkBufs() error {
	s := &t.bufs
	live := make([]int, len(s.chunks))
	var err error
	t.each(func(path string, id nodeID, n *node) {
		size := n.payload()
		if n.buf == 0 {
			if size != 0 && err == nil {
				err = fmt.Errorf("%w: %s has %d bytes and no record", ErrInconsistent, path, size)
			}
			return
		}
		c, off := int(n.buf>>32), int(uint32(n.buf))
		if c >= len(s.chunks) || off < bufHeader || off+size > len(s.chunks[c].b) {
			if err == nil {
				err = fmt.Errorf("%w: %s has record %#x outside the store", ErrInconsistent, path, n.buf)
			}
			return
		}
		hdr := s.chunks[c].b[off-bufHeader:]
		if nodeID(binary.LittleEndian.Uint32(hdr)) != id || int(binary.LittleEndian.Uint32(hdr[4:])) != size {
			if err == nil {
				err = fmt.Errorf("%w: the record of %s names another node or length", ErrInconsistent, path)
			}
		}
		live[c] += bufHeader + size
	})
	if err != nil {
		return err
	}
	dead := 0
	for c, ch := range s.chunks {
		if live[c] != ch.live {
			return fmt.Errorf("%w: chunk %d has %d live bytes, counts %d", ErrInconsistent, c, live[c], ch.live)
		}
		if ch.b != nil && uint32(c) != s.cur && ch.at == 0 && sparse(ch.live, len(ch.b)) {
			return fmt.Errorf("%w: chunk %d is %d of %d bytes live and not queued", ErrInconsistent, c, ch.live, len(ch.b))
		}
		if ch.at != 0 {
			if ch.at > len(s.pending) || s.pending[ch.at-1] != uint32(c) {
				return fmt.Errorf("%w: chunk %d is not where pending has it", ErrInconsistent, c)
			}
			dead += len(ch.b) - ch.live
		}
	}
	if dead != s.deadPending {
		return fmt.Errorf("%w: pending chunks hold %d dead bytes, counted %d", ErrInconsistent, dead, s.deadPending)
	}
	return nil
}

func (t *Tree) checkLinks() error {
	var size int64
	count := 0
	var err error
	t.each(func(path string, id nodeID, n *node) {
		count++
		size += int64(len(path) + n.dataLength())
		if err != nil {
			return
		}
		if got := t.lookup(path); got != id {
			err = fmt.Errorf("%w: %s is not in the path index", ErrInconsistent, path)
			return
		}
		err = t.checkKids(path, id)
	})
	if err != nil {
		return err
	}
	t.flushIndex()
	if count != t.nodes.count || t.index.count != count {
		return fmt.Errorf("%w: %d nodes reachable, %d counted, %d indexed", ErrInconsistent, count, t.nodes.count, t.index.count)
	}
	if size != t.dataSize {
		return fmt.Errorf("%w: data size %d, counted %d", ErrInconsistent, t.dataSize, size)
	}
	return nil
}

// checkKids verifies a node's child list: its count, its back links, and
// the cached sorted names if there are any.
func (t *Tree) checkKids(path string, id nodeID) error {
	n := t.nodes.at(id)
	var names []string
	prev := nodeID(0)
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		k := t.nodes.at(c)
		if k.parent != id || k.prev != prev {
			return fmt.Errorf("%w: bad links at child %s of %s", ErrInconsistent, t.bufs.name(k), path)
		}
		names = append(names, t.bufs.name(k))
		prev = c
	}
	if len(names) != int(n.numKids) {
		return fmt.Errorf("%w: %s has %d children, counts %d", ErrInconsistent, path, len(names), n.numKids)
	}
	if cached, ok := t.names.get(id); ok {
		slices.Sort(names)
		if !slices.Equal(cached, names) {
			return fmt.Errorf("%w: stale child list of %s", ErrInconsistent, path)
		}
	}
	return nil
}

func (t *Tree) checkIndexes() error {
	eph, cont, ttl := 0, 0, 0
	var err error
	t.each(func(path string, id nodeID, n *node) {
		owner := n.stat.EphemeralOwner
		var in bool
		switch KindOf(owner) {
		case Persistent:
			return
		case Ephemeral:
			_, in = t.ephemerals[owner][id]
			eph++
		case Container:
			_, in = t.containers[id]
			cont++
		case TTL:
			_, in = t.ttls[id]
			ttl++
		}
		if !in && err == nil {
			err = fmt.Errorf("%w: %s missing from the %v index", ErrInconsistent, path, KindOf(owner))
		}
	})
	if err != nil {
		return err
	}
	if eph != t.EphemeralCount() || cont != len(t.containers) || ttl != len(t.ttls) {
		return fmt.Errorf("%w: index sizes %d/%d/%d, nodes %d/%d/%d", ErrInconsistent,
			t.EphemeralCount(), len(t.containers), len(t.ttls), eph, cont, ttl)
	}
	return nil
}

func (t *Tree) checkACLRefs() error {
	refs := make(map[uint32]int)
	t.each(func(_ string, _ nodeID, n *node) { refs[n.acl]++ })
	for slot, c := range refs {
		e := t.acls.get(slot)
		if e == nil || e.refs != c || t.acls.byKey[e.key] != e || e.slot != slot {
			return fmt.Errorf("%w: ACL slot %d has the wrong count or entry (%d nodes)", ErrInconsistent, slot, c)
		}
	}
	if len(refs) != len(t.acls.byKey) {
		return fmt.Errorf("%w: %d ACLs in the table, %d in use", ErrInconsistent, len(t.acls.byKey), len(refs))
	}
	return nil
}
