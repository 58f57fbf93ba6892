package tree

import (
	"github.com/zoohq/zoo/internal/jute"
)

// aclEntry is one interned ACL list, shared by every node that has it.
// Its fields other than refs never change, so a Frozen view may hold it.
type aclEntry struct {
	id   uint64     // stable while the entry lives; names it in snapshots
	acl  []jute.ACL // owned by the table; never modified
	key  string     // the list's jute encoding
	refs int        // nodes using the entry
	hash uint64     // of key, folded into node digests
	slot uint32     // index in aclTable.entries
}

// aclTable interns ACL lists with reference counts, as Apache's
// ReferenceCountedACLCache does, so that the common case of many nodes
// sharing one ACL costs one slice. Nodes hold a slot index, not a
// pointer (see node.go); a freed slot is reused.
type aclTable struct {
	byKey   map[string]*aclEntry
	entries []*aclEntry // by slot; nil when free
	free    []uint32
	nextID  uint64
	last    *aclEntry // the entry interned last: most creates repeat it
	scratch []byte
}

func newACLTable() aclTable {
	return aclTable{byKey: make(map[string]*aclEntry)}
}

func (t *aclTable) get(slot uint32) *aclEntry { return t.entries[slot] }

// intern returns the slot of the entry for acl, adding one reference.
// acl is copied if it is new, so the caller keeps ownership of its slice.
func (t *aclTable) intern(acl []jute.ACL) uint32 {
	if e := t.last; e != nil && e.refs > 0 && equalACL(e.acl, acl) {
		e.refs++
		return e.slot
	}
	w := jute.Writer{B: t.scratch[:0]}
	jute.EncodeACLs(&w, acl)
	t.scratch = w.B
	e, ok := t.byKey[string(w.B)]
	if !ok {
		t.nextID++
		e = &aclEntry{id: t.nextID, acl: cloneACL(acl), key: string(w.B), hash: fnv64a(w.B)}
		if n := len(t.free); n > 0 {
			e.slot = t.free[n-1]
			t.free = t.free[:n-1]
			t.entries[e.slot] = e
		} else {
			e.slot = uint32(len(t.entries))
			t.entries = append(t.entries, e)
		}
		t.byKey[e.key] = e
	}
	e.refs++
	t.last = e
	return e.slot
}

// release drops one reference and forgets the entry when none is left.
func (t *aclTable) release(slot uint32) {
	e := t.entries[slot]
	e.refs--
	if e.refs <= 0 {
		delete(t.byKey, e.key)
		t.entries[slot] = nil
		t.free = append(t.free, slot)
		if t.last == e {
			t.last = nil
		}
	}
}

// equalACL compares two lists entry by entry, telling nil from empty, as
// their encodings do.
func equalACL(a, b []jute.ACL) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func cloneACL(acl []jute.ACL) []jute.ACL {
	if acl == nil {
		return nil
	}
	return append(make([]jute.ACL, 0, len(acl)), acl...)
}
