package tree

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/zoohq/zoo/internal/jute"
)

var worldRead = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// mustCreate creates path as a persistent node with the default cversion
// rule, failing the test on error.
func mustCreate(t testing.TB, tr *Tree, path string, data []byte, owner, zxid int64) jute.Stat {
	t.Helper()
	st, err := tr.CreateNode(path, data, openACL, owner, -1, zxid, zxid*1000)
	if err != nil {
		t.Fatalf("CreateNode(%s): %v", path, err)
	}
	return st
}

func mustStat(t testing.TB, tr *Tree, path string) jute.Stat {
	t.Helper()
	st, ok := tr.Stat(path)
	if !ok {
		t.Fatalf("Stat(%s): no node", path)
	}
	return st
}

func checkInvariants(t testing.TB, tr *Tree) {
	t.Helper()
	if err := tr.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestNewSystemNodes checks the nodes of a fresh tree against a fresh
// Apache 3.8.0 standalone server (kazoo get/get_children/get_acls):
//
//	/                 cversion=-1 numChildren=1, children [zookeeper]
//	/zookeeper        cversion=-2 numChildren=2, children [config quota]
//	/zookeeper/quota  cversion=0, no children
//	/zookeeper/config aversion=-1, ACL world:anyone READ, data b''
//
// every zxid and time 0, the first three with ACL world:anyone ALL; mntr
// reported zk_approximate_data_size 44.
func TestNewSystemNodes(t *testing.T) {
	tr := New()
	tests := []struct {
		path     string
		want     jute.Stat
		children []string
		acl      []jute.ACL
	}{
		{"/", jute.Stat{Cversion: -1, NumChildren: 1}, []string{"zookeeper"}, openACL},
		{"/zookeeper", jute.Stat{Cversion: -2, NumChildren: 2}, []string{"config", "quota"}, openACL},
		{"/zookeeper/quota", jute.Stat{}, []string{}, openACL},
		{"/zookeeper/config", jute.Stat{Aversion: -1}, []string{}, worldRead},
	}
	for _, tc := range tests {
		data, st, err := tr.Get(tc.path)
		if err != nil || st != tc.want || data == nil || len(data) != 0 {
			t.Errorf("Get(%s) = %q, %+v, %v; want empty data, %+v", tc.path, data, st, err, tc.want)
		}
		children, _, _ := tr.Children(tc.path)
		if !slices.Equal(children, tc.children) {
			t.Errorf("Children(%s) = %v, want %v", tc.path, children, tc.children)
		}
		acl, _, _ := tr.ACL(tc.path)
		if !slices.Equal(acl, tc.acl) {
			t.Errorf("ACL(%s) = %v, want %v", tc.path, acl, tc.acl)
		}
	}
	if got := tr.ApproximateDataSize(); got != 44 {
		t.Errorf("ApproximateDataSize = %d, want 44", got)
	}
	if got := tr.NodeCount(); got != 4 {
		t.Errorf("NodeCount = %d, want 4", got)
	}
	checkInvariants(t, tr)
}

// TestCversionCountsCreatesAndDeletes replays a probe run against Apache
// 3.8.0 (kazoo, zxids relative to the parent's czxid):
//
//	create /p                  cver=0 pzxid=0
//	create /p/s- sequential -> /p/s-0000000000, parent cver=1 pzxid=1 nc=1
//	create /p/a                parent cver=2 pzxid=2 nc=2
//	delete /p/a                parent cver=3 pzxid=3 nc=1
//	create /p/s- sequential -> /p/s-0000000002, parent cver=4 pzxid=4 nc=2
//
// The reported cversion counts creates and deletes, while the stored one
// (which names sequential nodes) counts creates only.
func TestCversionCountsCreatesAndDeletes(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/p", nil, 0, 10)
	type want struct {
		cver, nc int32
		pzxid    int64
		stored   int32
	}
	steps := []struct {
		do   func() error
		want want
	}{
		{func() error { _, err := tr.CreateNode("/p/s-0000000000", nil, openACL, 0, -1, 11, 0); return err }, want{1, 1, 11, 1}},
		{func() error { _, err := tr.CreateNode("/p/a", nil, openACL, 0, -1, 12, 0); return err }, want{2, 2, 12, 2}},
		{func() error { return tr.DeleteNode("/p/a", 13) }, want{3, 1, 13, 2}},
		{func() error { _, err := tr.CreateNode("/p/s-0000000002", nil, openACL, 0, -1, 14, 0); return err }, want{4, 2, 14, 3}},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		st := mustStat(t, tr, "/p")
		info, _ := tr.Lookup("/p")
		got := want{st.Cversion, st.NumChildren, st.Pzxid, info.Stat.Cversion}
		if got != s.want {
			t.Errorf("step %d: parent %+v, want %+v", i, got, s.want)
		}
	}
	checkInvariants(t, tr)
}

// TestSetDataAndSetACLStat replays Apache 3.8.0 (kazoo): create /p/b
// "xyz" at zxid 5 gives ver=0 dlen=3; set "12" (any version) gives ver=1
// mzxid=6 dlen=2; set with version 1 gives ver=2 mzxid=7; setACL gives
// aver=1 then aver=2, mzxid unchanged; czxid and pzxid never move.
func TestSetDataAndSetACLStat(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/b", []byte("xyz"), 0, 5)
	if _, err := tr.SetData("/b", []byte("12"), 1, 6, 6000); err != nil {
		t.Fatal(err)
	}
	st, err := tr.SetData("/b", []byte("12"), 2, 7, 7000)
	if err != nil {
		t.Fatal(err)
	}
	want := jute.Stat{Czxid: 5, Mzxid: 7, Ctime: 5000, Mtime: 7000, Version: 2, DataLength: 2, Pzxid: 5}
	if st != want {
		t.Errorf("after setData: %+v, want %+v", st, want)
	}
	for v := int32(1); v <= 2; v++ {
		if st, err = tr.SetACL("/b", worldRead, v); err != nil {
			t.Fatal(err)
		}
	}
	want.Aversion = 2
	if st != want {
		t.Errorf("after setACL: %+v, want %+v", st, want)
	}
	if acl, _, _ := tr.ACL("/b"); !slices.Equal(acl, worldRead) {
		t.Errorf("ACL = %v", acl)
	}
	checkInvariants(t, tr)
}

func TestWriteErrors(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/a", nil, 0, 1)
	tests := []struct {
		name string
		do   func() error
		want jute.Code
	}{
		{"create existing", func() error { _, err := tr.CreateNode("/a", nil, openACL, 0, -1, 2, 0); return err }, jute.NodeExists},
		{"create root", func() error { _, err := tr.CreateNode("/", nil, openACL, 0, -1, 2, 0); return err }, jute.NodeExists},
		{"create no parent", func() error { _, err := tr.CreateNode("/x/y", nil, openACL, 0, -1, 2, 0); return err }, jute.NoNode},
		{"create bad path", func() error { _, err := tr.CreateNode("/a/", nil, openACL, 0, -1, 2, 0); return err }, jute.BadArguments},
		{"create relative", func() error { _, err := tr.CreateNode("a", nil, openACL, 0, -1, 2, 0); return err }, jute.BadArguments},
		{"delete missing", func() error { return tr.DeleteNode("/b", 2) }, jute.NoNode},
		{"delete no parent", func() error { return tr.DeleteNode("/x/y", 2) }, jute.NoNode},
		{"delete root", func() error { return tr.DeleteNode("/", 2) }, jute.BadArguments},
		{"delete relative", func() error { return tr.DeleteNode("a", 2) }, jute.BadArguments},
		{"setData missing", func() error { _, err := tr.SetData("/b", nil, 1, 2, 0); return err }, jute.NoNode},
		{"setACL missing", func() error { _, err := tr.SetACL("/b", openACL, 1); return err }, jute.NoNode},
		{"setCversion missing", func() error { return tr.SetCversionPzxid("/b", 1, 2) }, jute.NoNode},
	}
	for _, tc := range tests {
		if err := tc.do(); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	// A failed delete of a missing child still raises the parent's pzxid
	// (see DeleteNode); everything else is unchanged.
	if st := mustStat(t, tr, "/"); st.Pzxid != 2 {
		t.Errorf("root pzxid %d, want 2", st.Pzxid)
	}
	checkInvariants(t, tr)
}

// TestReplayIsIdempotent checks the replay rules of DataTree: a create
// whose parentCVersion is not above the parent's leaves cversion and pzxid
// alone, and a delete with an older zxid does not lower the pzxid.
func TestReplayIsIdempotent(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/p", nil, 0, 1)
	if _, err := tr.CreateNode("/p/a", nil, openACL, 0, 5, 10, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateNode("/p/b", nil, openACL, 0, 3, 8, 0); err != nil {
		t.Fatal(err)
	}
	st := mustStat(t, tr, "/p")
	if st.Pzxid != 10 || st.Cversion != 5*2-2 {
		t.Errorf("after replayed create: pzxid %d cversion %d, want 10, 8", st.Pzxid, st.Cversion)
	}
	if err := tr.DeleteNode("/p/b", 9); err != nil {
		t.Fatal(err)
	}
	if st := mustStat(t, tr, "/p"); st.Pzxid != 10 {
		t.Errorf("after older delete: pzxid %d, want 10", st.Pzxid)
	}
	if err := tr.SetCversionPzxid("/p", 7, 12); err != nil {
		t.Fatal(err)
	}
	if info, _ := tr.Lookup("/p"); info.Stat.Cversion != 7 || info.Stat.Pzxid != 12 {
		t.Errorf("SetCversionPzxid: %+v", info.Stat)
	}
	if err := tr.SetCversionPzxid("/p", 6, 13); err != nil {
		t.Fatal(err)
	}
	if info, _ := tr.Lookup("/p"); info.Stat.Cversion != 7 || info.Stat.Pzxid != 12 {
		t.Errorf("SetCversionPzxid lower: %+v", info.Stat)
	}
	checkInvariants(t, tr)
}

// TestDeleteSubtreeOnReplay: a replayed delete that meets a node with
// children removes them too, keeping the counts exact.
func TestDeleteSubtreeOnReplay(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/a", []byte("x"), 0, 1)
	mustCreate(t, tr, "/a/b", []byte("yy"), 7, 2)
	mustCreate(t, tr, "/a/b/c", nil, ContainerOwner, 3)
	if err := tr.DeleteNode("/a", 4); err != nil {
		t.Fatal(err)
	}
	if tr.NodeCount() != 4 || len(tr.Ephemerals(7)) != 0 || len(tr.ContainersToDelete()) != 0 {
		t.Errorf("subtree left behind: %d nodes", tr.NodeCount())
	}
	if tr.ApproximateDataSize() != New().ApproximateDataSize() {
		t.Errorf("data size %d", tr.ApproximateDataSize())
	}
	checkInvariants(t, tr)
}

// TestEphemeralOwnerReported checks what clients see for each kind of
// node, as Apache 3.8.0 reported it: an ephemeral's session id
// (0x1000005310f0003 for its session), 0 for a container (create -c) and
// 0 for a TTL node (create -t 100000).
func TestEphemeralOwnerReported(t *testing.T) {
	tr := New()
	const session = 0x1000005310f0003
	tests := []struct {
		path  string
		owner int64
		kind  Kind
		want  int64
	}{
		{"/persistent", 0, Persistent, 0},
		{"/ephemeral", session, Ephemeral, session},
		{"/container", ContainerOwner, Container, 0},
		{"/ttl", TTLOwner(100000), TTL, 0},
	}
	for i, tc := range tests {
		st := mustCreate(t, tr, tc.path, nil, tc.owner, int64(i+1))
		if st.EphemeralOwner != tc.want || KindOf(tc.owner) != tc.kind {
			t.Errorf("%s: reported owner %#x kind %v, want %#x %v", tc.path, st.EphemeralOwner, KindOf(tc.owner), tc.want, tc.kind)
		}
		if info, _ := tr.Lookup(tc.path); info.Stat.EphemeralOwner != tc.owner {
			t.Errorf("%s: stored owner %#x, want %#x", tc.path, info.Stat.EphemeralOwner, tc.owner)
		}
	}
	if got := TTLOf(TTLOwner(100000)); got != 100000 {
		t.Errorf("TTLOf = %d", got)
	}
	if got := uint64(TTLOwner(1)); got != 0xff00000000000001 {
		t.Errorf("TTLOwner(1) = %#x, want 0xff00000000000001 (EphemeralType javadoc)", got)
	}
	if got := TTLOf(TTLOwner(MaxTTL)); got != MaxTTL || MaxTTL != 1099511627775 {
		t.Errorf("MaxTTL round trip %d (Apache: 1099511627775)", got)
	}
	if got := tr.Ephemerals(session); !slices.Equal(got, []string{"/ephemeral"}) {
		t.Errorf("Ephemerals = %v", got)
	}
	if err := tr.DeleteNode("/ephemeral", 9); err != nil {
		t.Fatal(err)
	}
	if got := tr.Ephemerals(session); len(got) != 0 {
		t.Errorf("Ephemerals after delete = %v", got)
	}
	checkInvariants(t, tr)
}

// TestAllChildrenNumber: Apache 3.8.0 counts every descendant; "/" counts
// every node but the root (DataTree.getAllChildrenNumber). A fresh server
// has 3 under "/" and 2 under /zookeeper.
func TestAllChildrenNumber(t *testing.T) {
	tr := New()
	tests := []struct {
		path string
		want int
		err  error
	}{
		{"/", 3, nil},
		{"/zookeeper", 2, nil},
		{"/zookeeper/quota", 0, nil},
		{"/nope", 0, jute.NoNode},
	}
	for _, tc := range tests {
		if got, err := tr.AllChildrenNumber(tc.path); got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("AllChildrenNumber(%s) = %d, %v; want %d, %v", tc.path, got, err, tc.want, tc.err)
		}
	}
	mustCreate(t, tr, "/a", nil, 0, 1)
	mustCreate(t, tr, "/a/b", nil, 0, 2)
	mustCreate(t, tr, "/a/b/c", nil, 0, 3)
	mustCreate(t, tr, "/a/d", nil, 0, 4)
	mustCreate(t, tr, "/ab", nil, 0, 5) // a string prefix of /a/..., not a descendant
	for path, want := range map[string]int{"/": 8, "/a": 3, "/a/b": 1, "/ab": 0} {
		if got, _ := tr.AllChildrenNumber(path); got != want {
			t.Errorf("AllChildrenNumber(%s) = %d, want %d", path, got, want)
		}
	}
}

// TestNilAndEmptyData: Apache keeps null data apart from empty data
// (zkCli prints "null" for a node created without data), and so does the
// wire; the tree keeps whichever it was given.
func TestNilAndEmptyData(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/nil", nil, 0, 1)
	mustCreate(t, tr, "/empty", []byte{}, 0, 2)
	if d, _, _ := tr.Get("/nil"); d != nil {
		t.Errorf("nil data came back as %#v", d)
	}
	if d, _, _ := tr.Get("/empty"); d == nil {
		t.Error("empty data came back nil")
	}
	a := New()
	mustCreate(t, a, "/x", nil, 0, 1)
	b := New()
	mustCreate(t, b, "/x", []byte{}, 0, 1)
	if a.Digest() == b.Digest() {
		t.Error("digest does not tell nil data from empty")
	}
}

func TestACLInterning(t *testing.T) {
	tr := New()
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:p"}}}
	mustCreate(t, tr, "/a", nil, 0, 1)
	for i, p := range []string{"/b", "/c"} {
		if _, err := tr.CreateNode(p, nil, acl, 0, -1, int64(2+i), 0); err != nil {
			t.Fatal(err)
		}
	}
	acl[0].Perms = 0 // the tree copied the list
	b, _, _ := tr.ACL("/b")
	c, _, _ := tr.ACL("/c")
	if &b[0] != &c[0] || b[0].Perms != jute.PermAll {
		t.Error("equal ACLs are not shared, or the caller's slice was kept")
	}
	if n := len(tr.acls.byKey); n != 3 {
		t.Errorf("%d ACLs interned, want 3 (open, read-only, digest)", n)
	}
	for _, p := range []string{"/b", "/c"} {
		if _, err := tr.SetACL(p, openACL, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(tr.acls.byKey); n != 2 {
		t.Errorf("%d ACLs interned after release, want 2", n)
	}
	checkInvariants(t, tr)
}

// GetChecked answers the node's data, stat and ACL from one lookup.
func TestGetChecked(t *testing.T) {
	tr := New()
	acl := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "digest", ID: "u:p"}}}
	if _, err := tr.CreateNode("/a", []byte("data"), acl, 0, -1, 1, 0); err != nil {
		t.Fatal(err)
	}
	data, stat, acls, err := tr.GetChecked("/a")
	wantStat, _ := tr.Stat("/a")
	if err != nil || string(data) != "data" || stat != wantStat || !slices.Equal(acls, acl) {
		t.Fatalf("GetChecked(/a) = %q, %+v, %v, %v; want %q, %+v, %v", data, stat, acls, err, "data", wantStat, acl)
	}
	if _, _, _, err := tr.GetChecked("/missing"); err != jute.NoNode {
		t.Fatalf("GetChecked(/missing) error %v, want NoNode", err)
	}
}

// TestContainersAndTTL follows Apache 3.8's ContainerManager: a container
// is a candidate once it has had a child (cversion > 0) and has none; a
// TTL node once it has no children and now - mtime > ttl.
func TestContainersAndTTL(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/c1", nil, ContainerOwner, 1)
	mustCreate(t, tr, "/c2", nil, ContainerOwner, 2)
	mustCreate(t, tr, "/c2/x", nil, 0, 3)
	mustCreate(t, tr, "/c3", nil, ContainerOwner, 4)
	mustCreate(t, tr, "/c3/x", nil, 0, 5)
	if err := tr.DeleteNode("/c3/x", 6); err != nil {
		t.Fatal(err)
	}
	if got := tr.ContainersToDelete(); !slices.Equal(got, []string{"/c3"}) {
		t.Errorf("ContainersToDelete = %v, want [/c3]", got)
	}
	// Apache 3.8.0 reported /cont after create and delete of a child:
	// cversion=2, numChildren=0.
	if st := mustStat(t, tr, "/c3"); st.Cversion != 2 || st.NumChildren != 0 {
		t.Errorf("/c3 stat %+v", st)
	}

	if _, err := tr.CreateNode("/t1", nil, openACL, TTLOwner(100), -1, 7, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateNode("/t2", nil, openACL, TTLOwner(100), -1, 8, 1000); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, "/t2/x", nil, 0, 9)
	tests := []struct {
		now  int64
		want []string
	}{
		{1100, nil}, // elapsed == ttl: not yet
		{1101, []string{"/t1"}},
	}
	for _, tc := range tests {
		if got := tr.ExpiredTTL(tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("ExpiredTTL(%d) = %v, want %v", tc.now, got, tc.want)
		}
	}
	// setData moves mtime and so the deadline.
	if _, err := tr.SetData("/t1", nil, 1, 10, 1050); err != nil {
		t.Fatal(err)
	}
	if got := tr.ExpiredTTL(1101); len(got) != 0 {
		t.Errorf("ExpiredTTL after setData = %v", got)
	}
}

func TestWalkVisitsParentsFirstInOrder(t *testing.T) {
	tr := New()
	for i, p := range []string{"/b", "/a", "/a/z", "/a/y"} {
		mustCreate(t, tr, p, nil, 0, int64(i+1))
	}
	var got []string
	tr.Walk(func(path string, n Node) bool {
		got = append(got, path)
		return true
	})
	want := []string{"/", "/a", "/a/y", "/a/z", "/b", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk order %v, want %v", got, want)
	}
	n := 0
	tr.Walk(func(string, Node) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("Walk went on after false: %d calls", n)
	}
}

// TestRestoreFromWalk rebuilds a tree from another's Walk, as snapshot
// loading will, and expects the same digest and the same quotas.
func TestRestoreFromWalk(t *testing.T) {
	src := New()
	mustCreate(t, src, "/q", []byte("abc"), 0, 1)
	mustCreate(t, src, "/q/e", []byte("d"), 42, 2)
	mustCreate(t, src, "/zookeeper/quota/q", nil, 0, 3)
	mustCreate(t, src, "/zookeeper/quota/q/zookeeper_limits", []byte("count=10,bytes=-1"), 0, 4)
	mustCreate(t, src, "/zookeeper/quota/q/zookeeper_stats", []byte("count=0,bytes=0"), 0, 5)
	if _, err := src.SetData("/", []byte("root"), 1, 6, 6); err != nil {
		t.Fatal(err)
	}
	dst := New()
	src.Walk(func(path string, n Node) bool {
		if err := dst.Restore(path, n.Data, n.ACL, n.Stat); err != nil {
			t.Fatalf("Restore(%s): %v", path, err)
		}
		return true
	})
	if err := dst.Restored(); err != nil {
		t.Fatal(err)
	}
	if src.Digest() != dst.Digest() {
		t.Error("restored tree has another digest")
	}
	checkInvariants(t, dst)
	if got := dst.Ephemerals(42); !slices.Equal(got, []string{"/q/e"}) {
		t.Errorf("restored ephemerals %v", got)
	}
	mustCreate(t, dst, "/q/f", []byte("xy"), 0, 7)
	if d, _, _ := dst.Get(StatPath("/q")); string(d) != "count=3,bytes=6" {
		t.Errorf("restored quota stats %q, want count=3,bytes=6", d)
	}
	if err := dst.Restore("/missing/x", nil, openACL, StatPersisted{}); !errors.Is(err, jute.NoNode) {
		t.Errorf("Restore without parent: %v", err)
	}
}

// TestChildrenIsACopy: the cached sorted list is never handed out, and it
// follows every change.
func TestChildrenIsACopy(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/d", nil, 0, 1)
	mustCreate(t, tr, "/d/b", nil, 0, 2)
	mustCreate(t, tr, "/d/a", nil, 0, 3)
	got, _, _ := tr.Children("/d")
	got[0] = "zzz"
	if again, _, _ := tr.Children("/d"); !slices.Equal(again, []string{"a", "b"}) {
		t.Errorf("Children = %v after the caller changed its copy", again)
	}
	mustCreate(t, tr, "/d/c", nil, 0, 4)
	if err := tr.DeleteNode("/d/a", 5); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := tr.Children("/d"); !slices.Equal(again, []string{"b", "c"}) {
		t.Errorf("Children = %v after changes", again)
	}
	checkInvariants(t, tr)
}

// TestReportWrapsLikeJava: cversion arithmetic overflows in int32 as
// Java's int does (checked with java: Integer.MIN_VALUE*2 - 1 == -1).
func TestReportWrapsLikeJava(t *testing.T) {
	s := StatPersisted{Cversion: -1 << 31}
	if got := s.Report(1, 0).Cversion; got != -1 {
		t.Errorf("cversion %d, want -1", got)
	}
}

// The server reads the tree from many goroutines at once, under its read
// lock: a read must not write shared state unsafely. Run with -race (the
// sorted-children cache once raced here).
func TestConcurrentReads(t *testing.T) {
	tr := New()
	if _, err := tr.CreateNode("/d", nil, openACL, 0, -1, 1, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := tr.CreateNode(fmt.Sprintf("/d/c%02d", i), nil, openACL, 0, -1, int64(i+2), 1); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				names, _, err := tr.Children("/d")
				if err != nil || len(names) != 50 || names[0] != "c00" {
					t.Errorf("Children = %d names, %v", len(names), err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A node stays at 112 bytes, a size class of the allocator: a 3M-znode
// tree is mostly nodes.
func TestNodeSize(t *testing.T) {
	if got := unsafe.Sizeof(node{}); got != 112 {
		t.Fatalf("node is %d bytes; want 112", got)
	}
}

// The slab holds no pointers, so the collector never scans it: a field
// that is or holds a pointer would make every collection trace every
// node (issue 17).
func TestNodeHoldsNoPointers(t *testing.T) {
	var holds func(reflect.Type) bool
	holds = func(typ reflect.Type) bool {
		switch typ.Kind() {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String,
			reflect.Interface, reflect.Chan, reflect.Func:
			return true
		case reflect.Array:
			return holds(typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				if holds(typ.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	if holds(reflect.TypeFor[[chunkSize]node]()) {
		t.Fatal("a chunk of nodes holds a pointer")
	}
}

// Data keeps nil and empty apart and gives back the bytes it was given,
// small or large enough for a chunk of its own.
func TestNodeData(t *testing.T) {
	tr := New()
	for i, data := range [][]byte{nil, {}, []byte("x"), make([]byte, 1000), bytes.Repeat([]byte("y"), bufChunkBytes)} {
		path := fmt.Sprintf("/n%d", i)
		mustCreate(t, tr, path, data, 0, 1)
		got, _, err := tr.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (data == nil) || !bytes.Equal(got, data) || len(got) != len(data) {
			t.Fatalf("Get = %d bytes (nil %v); set %d (nil %v)", len(got), got == nil, len(data), data == nil)
		}
		if kids, _, _ := tr.Children("/"); !slices.Contains(kids, path[1:]) {
			t.Fatalf("children of / = %v, no %s", kids, path[1:])
		}
	}
	checkInvariants(t, tr)
}

// TestRestoreAnyOrder: Restore looks for a parent near the node restored
// last first (a depth-first snapshot); any other order, and a last node
// deleted and its slot reused since, still find the right parent.
func TestRestoreAnyOrder(t *testing.T) {
	for _, mask := range []uint64{^uint64(0), 3, 7 << 61} { // 3: most paths share a hash; 7<<61: eight
		t.Run(fmt.Sprintf("mask=%#x", mask), func(t *testing.T) { testRestoreAnyOrder(t, mask) })
	}
}

func testRestoreAnyOrder(t *testing.T, mask uint64) {
	tr := New()
	collide(tr, mask)
	for _, p := range []string{"/a", "/a/b", "/c", "/a/d", "/a/b/e", "/c/f", "/a/b/e/g", "/a/b/h"} {
		if err := tr.Restore(p, []byte(p), openACL, StatPersisted{Czxid: 1}); err != nil {
			t.Fatalf("Restore(%s): %v", p, err)
		}
	}
	if err := tr.DeleteNode("/a/b/h", 2); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, "/c/h", nil, 0, 3) // takes the freed slot
	for _, p := range []string{"/a/b/i", "/c/h/j"} {
		if err := tr.Restore(p, nil, openACL, StatPersisted{Czxid: 4}); err != nil {
			t.Fatalf("Restore(%s): %v", p, err)
		}
	}
	checkInvariants(t, tr)
	for parent, want := range map[string][]string{
		"/a": {"b", "d"}, "/a/b": {"e", "i"}, "/c": {"f", "h"}, "/c/h": {"j"}, "/a/b/e": {"g"},
	} {
		if got, _, err := tr.Children(parent); err != nil || !slices.Equal(got, want) {
			t.Errorf("Children(%s) = %v, %v; want %v", parent, got, err, want)
		}
	}
}

// A snapshot that lists a path twice is refused when the load finishes:
// the restored nodes are checked as they go into the index.
func TestRestoredRefusesAPathListedTwice(t *testing.T) {
	for _, mask := range []uint64{^uint64(0), 3} {
		tr := New()
		collide(tr, mask)
		for _, p := range []string{"/a", "/a/b", "/c", "/a"} {
			if err := tr.Restore(p, nil, openACL, StatPersisted{}); err != nil {
				t.Fatalf("Restore(%s): %v", p, err)
			}
		}
		if err := tr.Restored(); !errors.Is(err, jute.NodeExists) || !strings.Contains(err.Error(), "/a restored twice") {
			t.Fatalf("mask %#x: Restored: %v, want /a restored twice (NodeExists)", mask, err)
		}
	}
}
