package txn

import (
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// TestApplyStaleRef changes the tree between a txn's prep and its apply,
// as another leader's txns or an installed snapshot can, so that the node
// prep found for Apply to reuse (Txn.ref) was deleted and its slot reused
// by another node, or the path was recreated in another slot. Apply must
// change the node at the txn's path all the same: the leader's tree must
// end as a follower's, which applies the decoded txn (no ref). Without the
// check of the ref the setData and delete would change /d/b and the create
// would go under /q.
func TestApplyStaleRef(t *testing.T) {
	cases := []struct {
		name string
		req  Request
		// change is made to both trees after prep; the ref must be stale
		// after it unless reused is set.
		change func(tr *tree.Tree) error
		reused bool // the path was recreated in its own slot: the ref holds
		want   func(h *harness)
	}{{
		name:   "setData, slot reused by a sibling, path recreated",
		req:    setData("/d/a", "new", -1),
		change: deleteAndReuse("/d/a", "/d/b", true),
		want: func(h *harness) {
			h.wantData("/d/a", "new")
			h.wantData("/d/b", "b")
		},
	}, {
		name:   "setData, slot reused by a sibling, path gone",
		req:    setData("/d/a", "new", -1),
		change: deleteAndReuse("/d/a", "/d/b", false),
		want:   func(h *harness) { h.wantData("/d/b", "b") },
	}, {
		name:   "setData, path recreated in the same slot",
		req:    setData("/d/a", "new", -1),
		change: deleteAndReuse("/d/a", "/d/a", false),
		reused: true,
		want:   func(h *harness) { h.wantData("/d/a", "new") },
	}, {
		name:   "delete, slot reused by a sibling, path recreated",
		req:    del("/d/a", -1),
		change: deleteAndReuse("/d/a", "/d/b", true),
		want: func(h *harness) {
			h.wantGone("/d/a")
			h.wantData("/d/b", "b")
		},
	}, {
		name:   "delete, slot reused by a sibling, path gone",
		req:    del("/d/a", -1),
		change: deleteAndReuse("/d/a", "/d/b", false),
		want:   func(h *harness) { h.wantData("/d/b", "b") },
	}, {
		name:   "create, parent's slot reused, parent recreated",
		req:    create("/p/c", "c", 0),
		change: deleteAndReuse("/p", "/q", true),
		want: func(h *harness) {
			h.wantData("/p/c", "c")
			h.wantGone("/q/c")
		},
	}, {
		name:   "create, parent's slot reused, parent gone",
		req:    create("/p/c", "c", 0),
		change: deleteAndReuse("/p", "/q", false),
		want:   func(h *harness) { h.wantGone("/q/c") },
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			leader, follower := staleRefHarness(t), staleRefHarness(t)
			tx := leader.prep(c.req)
			if tx.ref == (tree.Ref{}) {
				t.Fatal("prep left no ref to reuse")
			}
			decoded, err := Unmarshal(tx.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			if decoded.ref != (tree.Ref{}) {
				t.Fatal("a decoded txn has a ref")
			}
			for _, h := range []*harness{leader, follower} {
				if err := c.change(h.st.Tree); err != nil {
					t.Fatal(err)
				}
			}
			path := describeRecord(c.req.Record)
			if c.req.Op == jute.OpCreate {
				path, _, _ = tree.Split(path)
			}
			info, ok := leader.st.Tree.Lookup(path)
			if stale := !ok || info.Ref != tx.ref; stale == c.reused {
				t.Fatalf("the ref is stale: %v, want %v", stale, !c.reused)
			}
			got := leader.apply(tx)
			want := follower.apply(decoded)
			if got.Err != want.Err || got.Stat != want.Stat || len(got.Triggers) != len(want.Triggers) {
				t.Errorf("leader applied %v %+v %v, follower %v %+v %v", got.Err, got.Stat, got.Triggers, want.Err, want.Stat, want.Triggers)
			}
			if l, f := leader.st.Tree.Digest(), follower.st.Tree.Digest(); l != f {
				t.Errorf("leader's tree digest %x, follower's %x", l, f)
			}
			c.want(leader)
		})
	}
}

// staleRefHarness holds /d with /d/a and /d/b, and an empty /p.
func staleRefHarness(t *testing.T) *harness {
	h := newHarness(t, PrepConfig{})
	h.mustDo(create("/d", "", 0))
	h.mustDo(create("/d/a", "a", 0))
	h.mustDo(create("/d/b", "b", 0))
	h.mustDo(create("/p", "", 0))
	return h
}

// deleteAndReuse deletes path and creates other in its slot (the slab
// reuses the slot freed last), moving other's node there if it exists;
// with recreate, path is created again after, in another slot. The
// changes bypass the Prepper, as another leader's txns would.
func deleteAndReuse(path, other string, recreate bool) func(tr *tree.Tree) error {
	return func(tr *tree.Tree) error {
		const zxid, now = 1000, 2000
		data, _, err := tr.Get(other)
		if err == nil && other != path {
			if err := tr.DeleteNode(other, zxid); err != nil {
				return err
			}
		}
		if err := tr.DeleteNode(path, zxid); err != nil {
			return err
		}
		if _, err := tr.CreateNode(other, data, open, 0, -1, zxid, now); err != nil {
			return err
		}
		if recreate {
			if _, err := tr.CreateNode(path, []byte("again"), open, 0, -1, zxid+1, now); err != nil {
				return err
			}
		}
		return nil
	}
}

func (h *harness) wantData(path, want string) {
	h.t.Helper()
	data, _, err := h.st.Tree.Get(path)
	if err != nil || string(data) != want {
		h.t.Errorf("%s: data %q, %v; want %q", path, data, err, want)
	}
}

func (h *harness) wantGone(path string) {
	h.t.Helper()
	if h.st.Tree.Exists(path) {
		h.t.Errorf("%s exists", path)
	}
}
