package tree

import (
	"github.com/zoohq/zoo/internal/jute"
)

// CreateNode adds the node path with data, acl and ephemeral owner owner
// (a session id, ContainerOwner, TTLOwner(ttl) or 0), created at zxid and
// time, and returns its stat (DataTree.createNode).
//
// parentCVersion is the parent's stored cversion after this create, as
// prep computed it; -1 means "the current one plus one". The parent's
// cversion and pzxid are raised to parentCVersion and zxid only if
// parentCVersion is greater than the current cversion, so replaying a
// create whose node was created and deleted again within a fuzzy
// snapshot's range cannot move them back.
//
// It fails with jute.BadArguments for an invalid path, jute.NoNode if the
// parent is missing, and jute.NodeExists if path exists; the tree is then
// unchanged. The tree keeps data and copies acl.
func (t *Tree) CreateNode(path string, data []byte, acl []jute.ACL, owner int64, parentCVersion int32, zxid, time int64) (jute.Stat, error) {
	if err := ValidatePath(path); err != nil {
		return jute.Stat{}, err
	}
	parentPath, name, _ := Split(path)
	parent, ok := t.nodes[parentPath]
	if !ok {
		return jute.Stat{}, jute.NoNode
	}
	if _, ok := parent.children.get(name); ok || path == Root {
		return jute.Stat{}, jute.NodeExists
	}
	if parentCVersion == -1 {
		parentCVersion = parent.stat.Cversion + 1
	}
	t.touch(parent)
	if parentCVersion > parent.stat.Cversion {
		t.undigest(parentPath, parent)
		parent.stat.Cversion = parentCVersion
		parent.stat.Pzxid = zxid
		t.redigest(parentPath, parent)
	}
	n := newNode(data, t.acls.intern(acl), StatPersisted{
		Czxid: zxid, Mzxid: zxid, Pzxid: zxid,
		Ctime: time, Mtime: time,
		EphemeralOwner: owner,
	})
	t.link(parent, name, path, n)
	t.index(path, owner)
	t.quotaNodeCreated(parentPath, name)
	t.updateQuota(path, int64(len(data)), 1)
	return n.report(), nil
}

// index records a new node in the side index its kind needs.
func (t *Tree) index(path string, owner int64) {
	switch KindOf(owner) {
	case Container:
		t.containers[path] = struct{}{}
	case TTL:
		t.ttls[path] = struct{}{}
	case Ephemeral:
		set := t.ephemerals[owner]
		if set == nil {
			set = make(map[string]struct{})
			t.ephemerals[owner] = set
		}
		set[path] = struct{}{}
	}
}

// unindex removes a deleted node from its side index.
func (t *Tree) unindex(path string, owner int64) {
	switch KindOf(owner) {
	case Container:
		delete(t.containers, path)
	case TTL:
		delete(t.ttls, path)
	case Ephemeral:
		set := t.ephemerals[owner]
		delete(set, path)
		if len(set) == 0 {
			delete(t.ephemerals, owner)
		}
	}
}

// DeleteNode removes the node path, a change at zxid
// (DataTree.deleteNode). Prep refuses to delete a node with children, but
// a replayed delete can meet a node that was deleted and created again,
// with new children, later in a fuzzy snapshot's range. Apache then
// orphans the children in its path map; DeleteNode removes the whole
// subtree instead, which the replay of the later creates rebuilds, so the
// accounting (sizes, ACL references, indexes, quotas) stays exact.
//
// Deleting a child does not change the parent's stored cversion (it counts
// creates); it raises the parent's pzxid to zxid if zxid is greater, which
// Apache does even when the child turns out to be missing, so a replayed
// delete still leaves the pzxid a later create expects.
//
// It fails with jute.NoNode if path or its parent does not exist, and
// jute.BadArguments for the root.
func (t *Tree) DeleteNode(path string, zxid int64) error {
	parentPath, name, ok := Split(path)
	if !ok || path == Root {
		return jute.BadArguments
	}
	parent, ok := t.nodes[parentPath]
	if !ok {
		return jute.NoNode
	}
	t.touch(parent)
	if zxid > parent.stat.Pzxid {
		t.undigest(parentPath, parent)
		parent.stat.Pzxid = zxid
		t.redigest(parentPath, parent)
	}
	n, ok := t.nodes[path]
	if child, _ := parent.children.get(name); !ok || child != n {
		return jute.NoNode
	}
	parent.children.remove(name)
	t.unlink(path, n)
	return nil
}

// unlink forgets n, at path, and all its descendants, keeping every count
// and index in step.
func (t *Tree) unlink(path string, n *node) {
	if n.children != nil {
		for name, child := range n.children.byName {
			t.unlink(Join(path, name), child)
		}
	}
	t.undigest(path, n)
	delete(t.nodes, path)
	t.dataSize -= int64(len(path) + len(n.getData()))
	t.acls.release(n.acl)
	t.unindex(path, n.stat.EphemeralOwner)
	parentPath, name, _ := Split(path)
	t.quotaNodeDeleted(parentPath, name)
	t.updateQuota(path, -int64(len(n.getData())), -1)
}

// SetData replaces the data of path, sets its version to version (the new
// version prep computed, not the expected one) and its mtime and mzxid,
// and returns the new stat (DataTree.setData). It fails with jute.NoNode.
// The tree keeps data.
func (t *Tree) SetData(path string, data []byte, version int32, zxid, time int64) (jute.Stat, error) {
	n, ok := t.nodes[path]
	if !ok {
		return jute.Stat{}, jute.NoNode
	}
	t.touch(n)
	t.undigest(path, n)
	old := n.getData()
	n.setData(data)
	n.stat.Mtime = time
	n.stat.Mzxid = zxid
	n.stat.Version = version
	t.redigest(path, n)
	diff := int64(len(data) - len(old))
	t.dataSize += diff
	t.updateQuota(path, diff, 0)
	return n.report(), nil
}

// SetACL replaces the ACL of path and sets its aversion to version (the
// new aversion prep computed), and returns the new stat
// (DataTree.setACL). It changes no zxid or time. It fails with jute.NoNode.
func (t *Tree) SetACL(path string, acl []jute.ACL, version int32) (jute.Stat, error) {
	n, ok := t.nodes[path]
	if !ok {
		return jute.Stat{}, jute.NoNode
	}
	t.touch(n)
	old := n.acl
	n.acl = t.acls.intern(acl)
	t.acls.release(old)
	t.undigest(path, n)
	n.stat.Aversion = version
	t.redigest(path, n)
	return n.report(), nil
}

// SetCversionPzxid raises the stored cversion of path to cversion (-1: the
// current one plus one) and its pzxid to zxid, if cversion is greater than
// the current one (DataTree.setCversionPzxid). Apply calls it when a create
// meets an existing node on replay, so the parent still ends with the
// cversion the create gave it. It fails with jute.NoNode.
func (t *Tree) SetCversionPzxid(path string, cversion int32, zxid int64) error {
	n, ok := t.nodes[path]
	if !ok {
		return jute.NoNode
	}
	if cversion == -1 {
		cversion = n.stat.Cversion + 1
	}
	if cversion > n.stat.Cversion {
		t.touch(n)
		t.undigest(path, n)
		n.stat.Cversion = cversion
		n.stat.Pzxid = zxid
		t.redigest(path, n)
	}
	return nil
}
