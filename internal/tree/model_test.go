package tree

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// model is a naive reference for the tree: a map of paths whose children
// and reported stats are recomputed by scanning every key. The property
// test drives it and a Tree with the same random operations and demands
// the same answers.
type model struct {
	nodes map[string]*mnode
}

type mnode struct {
	data    []byte
	acl     []jute.ACL
	stat    StatPersisted
	changes int32 // children created or deleted: the reported cversion
}

func newModel() *model {
	m := &model{nodes: map[string]*mnode{}}
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		m.nodes[p] = &mnode{data: []byte{}, acl: openACL}
	}
	m.nodes["/zookeeper/config"].acl = readACL
	m.nodes["/zookeeper/config"].stat.Aversion = -1
	// Linked without counting, as Apache's constructor does.
	m.nodes["/"].changes = -1
	m.nodes["/zookeeper"].changes = -2
	return m
}

func (m *model) children(path string) []string {
	var out []string
	for p := range m.nodes {
		if parent, name, _ := Split(p); parent == path && p != Root {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// stat computes the reported stat without StatPersisted.Report.
func (m *model) stat(path string) jute.Stat {
	n := m.nodes[path]
	owner := n.stat.EphemeralOwner
	if owner == ContainerOwner || uint64(owner)>>56 == 0xff {
		owner = 0
	}
	return jute.Stat{
		Czxid: n.stat.Czxid, Mzxid: n.stat.Mzxid, Ctime: n.stat.Ctime, Mtime: n.stat.Mtime,
		Version: n.stat.Version, Cversion: n.changes, Aversion: n.stat.Aversion,
		EphemeralOwner: owner, DataLength: int32(len(n.data)),
		NumChildren: int32(len(m.children(path))), Pzxid: n.stat.Pzxid,
	}
}

func (m *model) create(path string, data []byte, acl []jute.ACL, owner, zxid, time int64) error {
	parentPath, _, _ := Split(path)
	parent, ok := m.nodes[parentPath]
	switch {
	case !ok:
		return jute.NoNode
	case m.nodes[path] != nil:
		return jute.NodeExists
	}
	parent.changes++
	parent.stat.Pzxid = zxid
	m.nodes[path] = &mnode{data: data, acl: acl, stat: StatPersisted{
		Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: time, Mtime: time, EphemeralOwner: owner,
	}}
	return nil
}

func (m *model) delete(path string, zxid int64) error {
	parentPath, _, _ := Split(path)
	parent, ok := m.nodes[parentPath]
	if !ok {
		return jute.NoNode
	}
	if zxid > parent.stat.Pzxid {
		parent.stat.Pzxid = zxid
	}
	if m.nodes[path] == nil {
		return jute.NoNode
	}
	parent.changes++
	delete(m.nodes, path)
	return nil
}

func (m *model) ephemerals(session int64) []string {
	var out []string
	for p, n := range m.nodes {
		if n.stat.EphemeralOwner == session {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// modelOp is one random operation applied to both tree and model.
type modelOp struct {
	kind  int // 0 create, 1 delete, 2 setData, 3 setACL
	path  string
	data  []byte
	acl   []jute.ACL
	owner int64
}

var testACLs = [][]jute.ACL{
	openACL,
	worldRead,
	{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:x"}}, {Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}},
}

var testOwners = []int64{0, 0, 0, 1, 2, ContainerOwner, TTLOwner(50)}

func randomOp(r *rand.Rand, m *model) modelOp {
	paths := make([]string, 0, len(m.nodes))
	for p := range m.nodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	pick := paths[r.IntN(len(paths))]
	op := modelOp{kind: r.IntN(4), acl: testACLs[r.IntN(len(testACLs))]}
	if r.IntN(4) > 0 {
		op.data = []byte(strings.Repeat("d", r.IntN(5)))
	}
	switch op.kind {
	case 0:
		op.path = Join(pick, string(rune('a'+r.IntN(3))))
		op.owner = testOwners[r.IntN(len(testOwners))]
	case 1:
		// Prep never deletes a node with children; choose a leaf, or a
		// missing node now and then to exercise the error path.
		op.path = pick
		if r.IntN(8) == 0 {
			op.path = Join(pick, "missing")
		} else if len(m.children(pick)) > 0 || IsSpecialPath(pick) {
			op.kind = 2
		}
	default:
		op.path = pick
		if r.IntN(8) == 0 {
			op.path = Join(pick, "missing")
		}
	}
	return op
}

func applyBoth(t *testing.T, tr *Tree, m *model, op modelOp, zxid int64) {
	t.Helper()
	var errT, errM error
	switch op.kind {
	case 0:
		_, errT = tr.CreateNode(op.path, op.data, op.acl, op.owner, -1, zxid, zxid*10)
		errM = m.create(op.path, op.data, op.acl, op.owner, zxid, zxid*10)
	case 1:
		errT = tr.DeleteNode(op.path, zxid)
		errM = m.delete(op.path, zxid)
	case 2:
		errM = jute.NoNode
		if n := m.nodes[op.path]; n != nil {
			errM = nil
			n.data, n.stat.Version, n.stat.Mzxid, n.stat.Mtime = op.data, n.stat.Version+1, zxid, zxid*10
		}
		ver := int32(0)
		if info, ok := tr.Lookup(op.path); ok {
			ver = info.Stat.Version + 1
		}
		_, errT = tr.SetData(op.path, op.data, ver, zxid, zxid*10)
	case 3:
		errM = jute.NoNode
		if n := m.nodes[op.path]; n != nil {
			errM = nil
			n.acl, n.stat.Aversion = op.acl, n.stat.Aversion+1
		}
		ver := int32(0)
		if info, ok := tr.Lookup(op.path); ok {
			ver = info.Stat.Aversion + 1
		}
		_, errT = tr.SetACL(op.path, op.acl, ver)
	}
	if !errors.Is(errT, errM) || (errT == nil) != (errM == nil) {
		t.Fatalf("op %+v: tree %v, model %v", op, errT, errM)
	}
}

func compare(t *testing.T, tr *Tree, m *model) {
	t.Helper()
	if tr.NodeCount() != len(m.nodes) {
		t.Fatalf("tree has %d nodes, model %d", tr.NodeCount(), len(m.nodes))
	}
	var size int64
	for path, n := range m.nodes {
		size += int64(len(path) + len(n.data))
		data, st, err := tr.Get(path)
		if err != nil || !bytes.Equal(data, n.data) || (data == nil) != (n.data == nil) {
			t.Fatalf("Get(%s) = %q, %v; model %q", path, data, err, n.data)
		}
		if want := m.stat(path); st != want {
			t.Fatalf("stat of %s = %+v, model %+v", path, st, want)
		}
		children, _, _ := tr.Children(path)
		if want := m.children(path); !slices.Equal(children, want) && len(children)+len(want) > 0 {
			t.Fatalf("children of %s = %v, model %v", path, children, want)
		}
		acl, _, _ := tr.ACL(path)
		if !slices.Equal(acl, n.acl) {
			t.Fatalf("ACL of %s = %v, model %v", path, acl, n.acl)
		}
	}
	if size != tr.ApproximateDataSize() {
		t.Fatalf("size %d, model %d", tr.ApproximateDataSize(), size)
	}
	for _, s := range []int64{1, 2} {
		if got, want := tr.Ephemerals(s), m.ephemerals(s); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Ephemerals(%d) = %v, model %v", s, got, want)
		}
	}
	checkInvariants(t, tr)
}

// TestTreeMatchesModel runs random operation sequences against the tree
// and the naive model.
func TestTreeMatchesModel(t *testing.T) {
	seeds := 30
	steps := 400
	if testing.Short() {
		seeds = 5
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		tr, m := New(), newModel()
		switch seed % 4 {
		case 1:
			// Most paths share a hash: one long run of the index.
			collide(tr, 3)
		case 3:
			// Eight tags: long runs from eight homes, one of which wraps
			// round the table's end.
			collide(tr, 7<<61)
		}
		if seed%4 >= 2 {
			// Small chunks: records are compacted and chunks dropped.
			smallChunks(tr, 256)
		}
		for i := range steps {
			applyBoth(t, tr, m, randomOp(r, m), int64(i+1))
			if i%50 == 49 {
				compare(t, tr, m)
			}
		}
		compare(t, tr, m)
	}
}

// collide rebuilds tr's path index with only mask's bits of each hash, so
// that paths collide.
func collide(tr *Tree, mask uint64) {
	ids := map[string]nodeID{}
	tr.each(func(path string, id nodeID, _ *node) { ids[path] = id })
	tr.index.mask = mask
	clear(tr.index.slots)
	tr.index.count = 0
	for path, id := range ids {
		tr.indexAdd(path, id)
	}
}

// TestDigestIgnoresHistoryOfACLTable: two trees that reach the same nodes
// by different routes (so with different ACL ids) have the same digest,
// and any change to a node changes it.
func TestDigestIgnoresHistoryOfACLTable(t *testing.T) {
	a, b := New(), New()
	mustCreate(t, a, "/x", []byte("1"), 0, 1)
	if _, err := b.CreateNode("/x", []byte("1"), worldRead, 0, -1, 1, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SetACL("/x", openACL, 0); err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() {
		t.Fatal("same nodes, different digests")
	}
	before := a.Digest()
	changes := []func(){
		func() { _, _ = a.SetData("/x", []byte("2"), 0, 1, 10) },
		func() { _, _ = a.SetACL("/x", worldRead, 0) },
		func() { _ = a.SetCversionPzxid("/x", 1, 2) },
	}
	for i, change := range changes {
		change()
		if d := a.Digest(); d == before {
			t.Errorf("change %d did not change the digest", i)
		} else {
			before = d
		}
	}
}
