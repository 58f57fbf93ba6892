package tree

import (
	"strconv"
	"testing"
)

// TestRefChecked gives the writes Refs that no longer name the node at
// their path: each must change the node the path names, as without a Ref.
func TestRefChecked(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/a", []byte("a"), 0, 1)
	mustCreate(t, tr, "/b", []byte("b"), 0, 1)
	a, _ := tr.Lookup("/a")

	// A freed slot has no parent, as the root has: it must not pass for
	// the root.
	if err := tr.DeleteNode("/a", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SetDataAt(a.Ref, Root, []byte("root"), 1, 11, 1); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := tr.Get(Root); string(data) != "root" {
		t.Errorf("root's data %q after a setData through a freed slot's Ref", data)
	}

	// The slot reused by another node.
	mustCreate(t, tr, "/c", []byte("c"), 0, 1)
	if c, _ := tr.Lookup("/c"); c.Ref != a.Ref {
		t.Fatal("the slab did not reuse the freed slot")
	}
	if _, err := tr.SetDataAt(a.Ref, "/b", []byte("b2"), 1, 12, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.DeleteNodeAt(a.Ref, "/a", 13); err == nil {
		t.Error("deleted /a through a Ref to /c")
	}
	if _, err := tr.CreateNodeAt(a.Ref, "/b/x", nil, openACL, 0, -1, 14, 1); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/b": "b2", "/c": "c"} {
		if data, _, err := tr.Get(path); err != nil || string(data) != want {
			t.Errorf("%s: %q, %v; want %q", path, data, err, want)
		}
	}
	if !tr.Exists("/b/x") || tr.Exists("/c/x") {
		t.Error("the create went under the Ref's node, not the path's parent")
	}

	// A Ref from a larger tree, past the end of this one's slab.
	big := New()
	var last Info
	for i := range 3 * chunkSize {
		p := "/n" + strconv.Itoa(i)
		mustCreate(t, big, p, []byte(""), 0, 1)
		last, _ = big.Lookup(p)
	}
	if _, err := tr.SetDataAt(last.Ref, "/c", []byte("c2"), 1, 15, 1); err != nil {
		t.Fatal(err)
	}
	if acl, err := tr.DeleteNodeAt(last.Ref, "/c", 16); err != nil || len(acl) != 1 {
		t.Errorf("delete /c: ACL %v, %v", acl, err)
	}
	if err := tr.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
