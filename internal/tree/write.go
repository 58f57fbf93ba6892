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
// unchanged. The tree copies data and acl.
func (t *Tree) CreateNode(path string, data []byte, acl []jute.ACL, owner int64, parentCVersion int32, zxid, time int64) (jute.Stat, error) {
	return t.CreateNodeAt(Ref{}, path, data, acl, owner, parentCVersion, zxid, time)
}

// CreateNodeAt is CreateNode with parentRef, a Ref to the parent from an
// earlier lookup, which saves looking the parent up if it still names it.
func (t *Tree) CreateNodeAt(parentRef Ref, path string, data []byte, acl []jute.ACL, owner int64, parentCVersion int32, zxid, time int64) (jute.Stat, error) {
	if err := ValidatePath(path); err != nil {
		return jute.Stat{}, err
	}
	parentPath, name, _ := Split(path)
	pid := t.found(parentRef, parentPath)
	if pid == 0 {
		return jute.Stat{}, jute.NoNode
	}
	if path == Root {
		return jute.Stat{}, jute.NodeExists
	}
	// One hash and one probe of the index both check that path is new
	// and link the node: nothing below changes the index before.
	h := t.index.hash(path)
	if t.lookupHashed(h, path) != 0 {
		return jute.Stat{}, jute.NodeExists
	}
	parent := t.nodes.at(pid)
	if parentCVersion == -1 {
		parentCVersion = parent.stat.Cversion + 1
	}
	t.touch(pid)
	if parentCVersion > parent.stat.Cversion {
		t.undigest(parent)
		parent.stat.Cversion = parentCVersion
		parent.stat.Pzxid = zxid
		t.redigest(parentPath, parent)
	}
	id := t.linkHashed(pid, name, path, h, data, t.acls.intern(acl), StatPersisted{
		Czxid: zxid, Mzxid: zxid, Pzxid: zxid,
		Ctime: time, Mtime: time,
		EphemeralOwner: owner,
	})
	t.indexKind(id, owner)
	t.quotaNodeCreated(parentPath, name)
	t.updateQuota(path, int64(len(data)), 1)
	return t.nodes.at(id).report(), nil
}

// indexKind records a new node in the side index its kind needs.
func (t *Tree) indexKind(id nodeID, owner int64) {
	switch KindOf(owner) {
	case Container:
		t.containers[id] = struct{}{}
	case TTL:
		t.ttls[id] = struct{}{}
	case Ephemeral:
		set := t.ephemerals[owner]
		if set == nil {
			set = make(map[nodeID]struct{})
			t.ephemerals[owner] = set
		}
		set[id] = struct{}{}
	}
}

// unindexKind removes a deleted node from its side index.
func (t *Tree) unindexKind(id nodeID, owner int64) {
	switch KindOf(owner) {
	case Container:
		delete(t.containers, id)
	case TTL:
		delete(t.ttls, id)
	case Ephemeral:
		set := t.ephemerals[owner]
		delete(set, id)
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
	_, err := t.DeleteNodeAt(Ref{}, path, zxid)
	return err
}

// DeleteNodeAt is DeleteNode with ref, a Ref to the node from an earlier
// lookup: if it still names the node, the parent is the node's, and
// neither is looked up. It returns the deleted node's ACL,
// which the tree no longer holds, for the NodeDeleted event; the slice is
// shared: do not modify it.
func (t *Tree) DeleteNodeAt(ref Ref, path string, zxid int64) ([]jute.ACL, error) {
	parentPath, _, ok := Split(path)
	if !ok || path == Root {
		return nil, jute.BadArguments
	}
	id := t.checkRef(ref, path)
	var pid nodeID
	if id != 0 {
		pid = t.nodes.at(id).parent
	} else {
		pid = t.lookup(parentPath)
	}
	if pid == 0 {
		return nil, jute.NoNode
	}
	parent := t.nodes.at(pid)
	t.touch(pid)
	if zxid > parent.stat.Pzxid {
		t.undigest(parent)
		parent.stat.Pzxid = zxid
		t.redigest(parentPath, parent)
	}
	if id == 0 {
		id = t.lookup(path)
	}
	if id == 0 {
		return nil, jute.NoNode
	}
	acl := t.acls.get(t.nodes.at(id).acl).acl
	t.unlink(path, id)
	return acl, nil
}

// unlink forgets the node id, at path, and all its descendants, keeping
// every count and index in step, and frees their slots. Each is saved for
// the open Frozen views first, since its slot may be reused.
func (t *Tree) unlink(path string, id nodeID) {
	t.touch(id)
	n := t.nodes.at(id)
	for n.firstChild != 0 {
		c := n.firstChild
		t.unlink(Join(path, t.bufs.name(t.nodes.at(c))), c)
	}
	t.undigest(n)
	t.indexRemove(path, id)
	t.dataSize -= int64(len(path) + n.dataLength())
	t.acls.release(n.acl)
	t.unindexKind(id, n.stat.EphemeralOwner)
	parentPath, name, _ := Split(path)
	t.quotaNodeDeleted(parentPath, name)
	t.updateQuota(path, -int64(n.dataLength()), -1)
	t.removeKid(id)
	t.names.forget(id)
	t.dropBuf(id)
	t.nodes.release(id)
}

// SetData replaces the data of path, sets its version to version (the new
// version prep computed, not the expected one) and its mtime and mzxid,
// and returns the new stat (DataTree.setData). It fails with jute.NoNode.
// The tree copies data.
func (t *Tree) SetData(path string, data []byte, version int32, zxid, time int64) (jute.Stat, error) {
	return t.SetDataAt(Ref{}, path, data, version, zxid, time)
}

// SetDataAt is SetData with ref, a Ref to the node from an earlier lookup,
// which saves looking path up if it still names the node.
func (t *Tree) SetDataAt(ref Ref, path string, data []byte, version int32, zxid, time int64) (jute.Stat, error) {
	id := t.found(ref, path)
	if id == 0 {
		return jute.Stat{}, jute.NoNode
	}
	n := t.nodes.at(id)
	t.touch(id)
	t.undigest(n)
	diff := int64(len(data) - n.dataLength())
	t.setData(id, data)
	n.stat.Mtime = time
	n.stat.Mzxid = zxid
	n.stat.Version = version
	t.redigest(path, n)
	t.dataSize += diff
	t.updateQuota(path, diff, 0)
	return n.report(), nil
}

// SetACL replaces the ACL of path and sets its aversion to version (the
// new aversion prep computed), and returns the new stat
// (DataTree.setACL). It changes no zxid or time. It fails with jute.NoNode.
func (t *Tree) SetACL(path string, acl []jute.ACL, version int32) (jute.Stat, error) {
	id := t.lookup(path)
	if id == 0 {
		return jute.Stat{}, jute.NoNode
	}
	n := t.nodes.at(id)
	t.touch(id)
	old := n.acl
	n.acl = t.acls.intern(acl)
	t.acls.release(old)
	t.undigest(n)
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
	id := t.lookup(path)
	if id == 0 {
		return jute.NoNode
	}
	n := t.nodes.at(id)
	if cversion == -1 {
		cversion = n.stat.Cversion + 1
	}
	if cversion > n.stat.Cversion {
		t.touch(id)
		t.undigest(n)
		n.stat.Cversion = cversion
		n.stat.Pzxid = zxid
		t.redigest(path, n)
	}
	return nil
}
