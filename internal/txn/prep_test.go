package txn

import (
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// TestPipelinedPrep preps a run of requests before applying any, as a busy
// leader does, and expects each to see the ones before it.
func TestPipelinedPrep(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	reqs := []struct {
		req  Request
		want string // the txn, described
	}{
		{create("/q", "", 0), "create path=/q data=\"\" ephemeral=false parentCVersion=1"},
		{create("/q/s-", "", jute.FlagPersistentSequential), "create path=/q/s-0000000000 data=\"\" ephemeral=false parentCVersion=1"},
		{create("/q/s-", "", jute.FlagPersistentSequential), "create path=/q/s-0000000001 data=\"\" ephemeral=false parentCVersion=2"},
		{create("/q/s-0000000001/c", "x", jute.FlagEphemeral), "create path=/q/s-0000000001/c data=\"x\" ephemeral=true parentCVersion=1"},
		{del("/q/s-0000000001", -1), "error err=NotEmpty"},
		{del("/q/s-0000000001/c", 0), "delete path=/q/s-0000000001/c"},
		{del("/q/s-0000000001", 0), "delete path=/q/s-0000000001"},
		{create("/q/s-0000000001", "again", 0), "create path=/q/s-0000000001 data=\"again\" ephemeral=false parentCVersion=3"},
		{setData("/q/s-0000000001", "v1", 0), "setData path=/q/s-0000000001 data=\"v1\" version=1"},
		{setData("/q/s-0000000001", "v2", 0), "error err=BadVersion"},
		{setData("/q/s-0000000001", "v2", 1), "setData path=/q/s-0000000001 data=\"v2\" version=2"},
		{setACL("/q", readOnly, 0), "setACL path=/q acl=[{1 {world anyone}}] version=1"},
		{create("/q/x", "", 0), "error err=NoAuth"},
		{multi(create("/q/m", "", 0)), "multi [error err=NoAuth]"},
	}
	var txns []*Txn
	for _, r := range reqs {
		tx := h.prep(r.req)
		if got := tx.Type.String() + " " + describeBody(tx.Body); got != r.want {
			t.Errorf("prep %v %s:\n got %s\nwant %s", r.req.Op, describeRecord(r.req.Record), got, r.want)
		}
		txns = append(txns, tx)
	}
	if h.p.Outstanding() == 0 {
		t.Fatal("no outstanding changes before apply")
	}
	for _, tx := range txns {
		if r := h.apply(tx); r.Err != jute.OK && tx.Type != jute.OpError && tx.Type != jute.OpMulti {
			t.Errorf("apply %v: %v", tx, r.Err)
		}
	}
	if n := h.p.Outstanding(); n != 0 {
		t.Errorf("%d outstanding changes after applying everything", n)
	}
	d, st, err := h.st.Tree.Get("/q/s-0000000001")
	if err != nil || string(d) != "v2" || st.Version != 2 {
		t.Errorf("final /q/s-0000000001: %q %+v %v", d, st, err)
	}
}

// TestFailedMultiRollsBackPrep: after a failed multi, later requests see
// the state from before it, sequence numbers included (ZOOKEEPER-1624).
func TestFailedMultiRollsBackPrep(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	h.mustDo(create("/p", "", 0))
	pending := h.prep(create("/p/a", "", 0)) // outstanding across the multi
	failed := h.prep(multi(create("/p/s-", "", jute.FlagPersistentSequential), setData("/p/a", "x", -1), del("/p/missing", -1)))
	next := h.prep(create("/p/s-", "", jute.FlagPersistentSequential))
	if got := next.Body.(*CreateTxn).Path; got != "/p/s-0000000001" {
		t.Errorf("after failed multi: %s, want /p/s-0000000001", got)
	}
	if sd := h.prep(setData("/p/a", "y", 0)); sd.Type != jute.OpSetData {
		t.Errorf("setData version 0 after the rolled-back setData: %v", sd)
	}
	h.apply(pending)
	after := h.st.Tree.Digest()
	if r := h.apply(failed); r.Err != jute.NoNode || h.st.Tree.Digest() != after {
		t.Errorf("failed multi: %v, changed the tree: %v", r.Err, h.st.Tree.Digest() != after)
	}
}

// TestCloseSession: the txn lists the session's ephemerals in the future
// state, apply deletes them with their triggers, and the session's later
// requests fail.
func TestCloseSession(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	h.mustDo(create("/e1", "", jute.FlagEphemeral))
	h.mustDo(create("/e2", "", jute.FlagEphemeral))
	h.mustDo(Request{SessionID: sess2, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/other", ACL: open, Flags: jute.FlagEphemeral}})
	pendingCreate := h.prep(create("/e3", "", jute.FlagEphemeral))
	pendingDelete := h.prep(del("/e1", -1))
	closing := h.prep(closeSession(sess1))
	if got := closing.Body.(*CloseSessionTxn).Paths; !slices.Equal(got, []string{"/e2", "/e3"}) {
		t.Errorf("closeSession paths %v, want [/e2 /e3]", got)
	}
	if late := h.prep(create("/late", "", 0)); late.Type != jute.OpError || late.Body.(*ErrorTxn).Err != jute.SessionExpired {
		t.Errorf("request after close: %v", late)
	}
	h.apply(pendingCreate)
	h.apply(pendingDelete)
	r := h.apply(closing)
	want := []Trigger{
		{Path: "/e2", Type: jute.EventNodeDeleted}, {Path: "/", Type: jute.EventNodeChildrenChanged},
		{Path: "/e3", Type: jute.EventNodeDeleted}, {Path: "/", Type: jute.EventNodeChildrenChanged},
	}
	if !sameEvents(r.Triggers, want) || r.Session != sess1 {
		t.Errorf("closeSession triggers %v session %#x", r.Triggers, r.Session)
	}
	if _, ok := h.st.Sessions[sess1]; ok {
		t.Error("session still there")
	}
	if got := h.st.Tree.Ephemerals(sess2); !slices.Equal(got, []string{"/other"}) {
		t.Errorf("other session's ephemerals %v", got)
	}
	if late := h.prep(setData("/other", "", -1)); late.Type != jute.OpError {
		t.Errorf("request after the close applied: %v", late)
	}
}

// TestSessions: a request of an unknown session fails; a session is usable
// as soon as its createSession is prepped.
func TestSessions(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	const s3 int64 = 0x77
	if tx := h.prep(Request{SessionID: s3, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/x", ACL: open}}); tx.Type != jute.OpError {
		t.Errorf("unknown session: %v", tx)
	}
	cs := h.prep(Request{SessionID: s3, Op: jute.OpCreateSession, Record: &CreateSession{TimeoutMs: 5000, Password: []byte("p")}})
	cr := h.prep(Request{SessionID: s3, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/x", ACL: open, Flags: jute.FlagEphemeral}})
	if cr.Type != jute.OpCreate {
		t.Fatalf("create in a session being created: %v", cr)
	}
	if r := h.apply(cs); r.Session != s3 || h.st.Sessions[s3].TimeoutMs != 5000 {
		t.Errorf("createSession: %+v %+v", r, h.st.Sessions[s3])
	}
	h.apply(cr)
	if got := h.st.Tree.Ephemerals(s3); !slices.Equal(got, []string{"/x"}) {
		t.Errorf("ephemerals %v", got)
	}
}

// TestResetDropsOutstanding: after Reset, prep sees the committed state.
func TestResetDropsOutstanding(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	h.prep(create("/a", "", 0))
	h.prep(closeSession(sess2))
	h.p.Reset()
	if tx := h.prep(create("/a", "", 0)); tx.Type != jute.OpCreate {
		t.Errorf("create after Reset: %v", tx)
	}
	h.p.Reset()
	if tx := h.prep(Request{SessionID: sess2, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/b", ACL: open}}); tx.Type != jute.OpCreate {
		t.Errorf("session still closing after Reset: %v", tx)
	}
}

// TestAppliedIgnoresForeignTxns: a txn decoded from the log (another
// leader's) does not drop this Prepper's records.
func TestAppliedIgnoresForeignTxns(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	mine := h.prep(create("/a", "", 0))
	decoded, err := Unmarshal(mine.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	h.p.Applied(decoded)
	if h.p.Outstanding() == 0 {
		t.Error("a decoded txn dropped outstanding changes")
	}
	h.p.Applied(nil)
	h.p.Applied(mine)
	if h.p.Outstanding() != 0 {
		t.Error("Applied kept changes")
	}
}

func TestDeleteContainer(t *testing.T) {
	h := newHarness(t, PrepConfig{ExtendedTypes: true})
	h.mustDo(createOp(jute.OpCreateContainer, "/c", 0))
	h.mustDo(create("/c/x", "", 0))
	h.mustDo(createTTL("/t", jute.FlagPersistentWithTTL, 100))
	h.mustDo(create("/p", "", 0))
	h.mustDo(create("/e", "", jute.FlagEphemeral))
	tests := []struct {
		path string
		want jute.Code
	}{
		{"/c", jute.NotEmpty},
		{"/p", jute.BadVersion},
		{"/e", jute.BadVersion},
		{"/missing", jute.NoNode},
		{"/zookeeper", jute.BadArguments},
		{"/t", jute.OK},
	}
	for _, tc := range tests {
		if _, r := h.do(deleteContainer(tc.path)); r.Err != tc.want {
			t.Errorf("deleteContainer %s: %v, want %v", tc.path, r.Err, tc.want)
		}
	}
	h.mustDo(del("/c/x", -1))
	if got := h.st.Tree.ContainersToDelete(); !slices.Equal(got, []string{"/c"}) {
		t.Errorf("ContainersToDelete %v", got)
	}
	tx, r := h.do(deleteContainer("/c"))
	if r.Err != jute.OK || tx.Type != jute.OpDeleteContainer || h.st.Tree.Exists("/c") {
		t.Errorf("deleteContainer /c: %v %v", tx, r.Err)
	}
}

// TestTriggers checks the watch events of each op in DataTree's order.
// Ref: programmer's guide, "ZooKeeper Watches".
func TestTriggers(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	h.mustDo(create("/a", "", 0))
	tests := []struct {
		name string
		req  Request
		want []Trigger
	}{
		{"create", create("/a/b", "", 0), []Trigger{{Path: "/a/b", Type: jute.EventNodeCreated}, {Path: "/a", Type: jute.EventNodeChildrenChanged}}},
		{"setData", setData("/a/b", "x", -1), []Trigger{{Path: "/a/b", Type: jute.EventNodeDataChanged}}},
		{"setACL", setACL("/a/b", open, -1), nil},
		{"delete", del("/a/b", -1), []Trigger{{Path: "/a/b", Type: jute.EventNodeDeleted}, {Path: "/a", Type: jute.EventNodeChildrenChanged}}},
		{"failed", del("/a/b", -1), nil},
		{"multi", multi(create("/a/m", "", 0), setData("/a", "y", -1), del("/a/m", -1)), []Trigger{
			{Path: "/a/m", Type: jute.EventNodeCreated}, {Path: "/a", Type: jute.EventNodeChildrenChanged},
			{Path: "/a", Type: jute.EventNodeDataChanged},
			{Path: "/a/m", Type: jute.EventNodeDeleted}, {Path: "/a", Type: jute.EventNodeChildrenChanged},
		}},
		{"failed multi", multi(create("/a/n", "", 0), del("/a/zz", -1)), nil},
		{"top-level", create("/top", "", 0), []Trigger{{Path: "/top", Type: jute.EventNodeCreated}, {Path: "/", Type: jute.EventNodeChildrenChanged}}},
	}
	for _, tc := range tests {
		if _, r := h.do(tc.req); !sameEvents(r.Triggers, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, r.Triggers, tc.want)
		}
	}
}

func TestACLChecks(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	digest := []jute.Id{{Scheme: "digest", ID: "bob:hash"}}
	bobOnly := []jute.ACL{{Perms: jute.PermAll, ID: digest[0]}}
	h.mustDo(create("/open", "", 0))
	h.mustDo(createACL("/bob", bobOnly))
	h.mustDo(Request{Op: jute.OpCreate, Auth: digest, Record: &jute.CreateRequest{Path: "/bob/c", ACL: open}})
	noDelete := []jute.ACL{{Perms: jute.PermAll &^ jute.PermDelete, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	h.mustDo(createACL("/nodel", noDelete))
	h.mustDo(create("/nodel/c", "", 0))
	tests := []struct {
		name string
		req  Request
		want jute.Code
	}{
		{"create under bob", create("/bob/x", "", 0), jute.NoAuth},
		{"delete under bob", del("/bob/c", -1), jute.NoAuth},
		{"setData bob", setData("/bob", "", -1), jute.NoAuth},
		{"setACL bob", setACL("/bob", open, -1), jute.NoAuth},
		{"check bob", check("/bob", -1), jute.NoAuth},
		{"delete needs DELETE on the parent", del("/nodel/c", -1), jute.NoAuth},
		{"auth scheme without ids", createACL("/open/a", []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth"}}}), jute.InvalidACL},
		{"super passes", Request{Op: jute.OpSetData, Auth: []jute.Id{{Scheme: "super", ID: "x"}}, Record: &jute.SetDataRequest{Path: "/bob", Version: -1}}, jute.OK},
	}
	for _, tc := range tests {
		if _, r := h.do(tc.req); r.Err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, r.Err, tc.want)
		}
	}
	h.mustDo(setACL("/nodel", open, -1))
	if _, r := h.do(createACL("/nodel2", noDelete)); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	h.mustDo(create("/nodel2/c", "", 0))
	if _, r := h.do(del("/nodel2", -1)); r.Err != jute.NotEmpty {
		t.Errorf("delete of a node whose own ACL denies DELETE: %v, want NotEmpty (the parent's ACL counts)", r.Err)
	}
	// An "auth" entry expands to the session's ids.
	r := h.mustDo(Request{Op: jute.OpCreate, Auth: digest, Record: &jute.CreateRequest{Path: "/open/mine", ACL: []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth"}}}}})
	if acl, _, _ := h.st.Tree.ACL(r.Path); !slices.Equal(acl, bobOnly) {
		t.Errorf("auth ACL stored as %v", acl)
	}
}

func TestQuotaEnforcement(t *testing.T) {
	var warnings []tree.QuotaOverrun
	h := newHarness(t, PrepConfig{EnforceQuota: true, QuotaWarning: func(o tree.QuotaOverrun) { warnings = append(warnings, o) }})
	h.mustDo(create("/q", "", 0))
	h.mustDo(create("/zookeeper/quota/q", "", 0))
	h.mustDo(create("/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=5=;countHardLimit=2", 0))
	h.mustDo(create("/zookeeper/quota/q/zookeeper_stats", "", 0))
	h.mustDo(create("/q/a", "12345", 0))
	if len(warnings) != 0 {
		t.Errorf("warnings within limits: %v", warnings)
	}
	if _, r := h.do(create("/q/b", "", 0)); r.Err != jute.QuotaExceeded {
		t.Errorf("create past the hard count: %v", r.Err)
	}
	if _, r := h.do(setData("/q/a", "123456", -1)); r.Err != jute.OK || len(warnings) != 1 || warnings[0].Hard {
		t.Errorf("setData past the soft bytes: %v, warnings %v", r.Err, warnings)
	}
	// Without enforcement Apache 3.8 lets everything through.
	h2 := newHarness(t, PrepConfig{})
	h2.mustDo(create("/q", "", 0))
	h2.mustDo(create("/zookeeper/quota/q", "", 0))
	h2.mustDo(create("/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;countHardLimit=1", 0))
	h2.mustDo(create("/zookeeper/quota/q/zookeeper_stats", "", 0))
	h2.mustDo(create("/q/a", "", 0))
}

func TestTTLNeedsExtendedTypes(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	if _, r := h.do(createTTL("/t", jute.FlagPersistentWithTTL, 1000)); r.Err != jute.Unimplemented {
		t.Errorf("createTTL without extended types: %v", r.Err)
	}
	if _, r := h.do(Request{Op: jute.OpReconfig, Record: &jute.ReconfigRequest{}}); r.Err != jute.ReconfigDisabled {
		t.Errorf("reconfig: %v", r.Err)
	}
	h2 := newHarness(t, PrepConfig{ReconfigEnabled: true})
	if _, r := h2.do(Request{Op: jute.OpReconfig, Record: &jute.ReconfigRequest{}}); r.Err != jute.Unimplemented {
		t.Errorf("reconfig enabled: %v", r.Err)
	}
}

func TestMalformedRequests(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	tests := []struct {
		name string
		req  Request
		want jute.Code
	}{
		{"wrong record", Request{Op: jute.OpCreate, Record: &jute.PathVersion{Path: "/a"}}, jute.MarshallingError},
		{"nil record", Request{Op: jute.OpSetData}, jute.MarshallingError},
		{"read op", Request{Op: jute.OpGetData, Record: &jute.PathWatch{Path: "/"}}, jute.Unimplemented},
		{"read op in multi", multi(Request{Op: jute.OpGetData, Record: &jute.PathWatch{Path: "/"}}), jute.MarshallingError},
		{"setACL in multi", multi(setACL("/", open, -1)), jute.MarshallingError},
		{"multi record", Request{Op: jute.OpMulti, Record: &jute.PathRequest{}}, jute.MarshallingError},
	}
	for _, tc := range tests {
		tx, r := h.do(tc.req)
		if tx.Type != jute.OpError || r.Err != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, tx, r.Err, tc.want)
		}
	}
}

// TestSequenceSuffix: Java's %010d, the sign inside the width (values
// printed by String.format(Locale.ENGLISH, "%010d", v) on the JDK that runs
// Apache 3.8.0 here).
func TestSequenceSuffix(t *testing.T) {
	for cv, want := range map[int32]string{
		0: "0000000000", 7: "0000000007", 2147483647: "2147483647",
		-5: "-000000005", -2147483648: "-2147483648",
	} {
		if got := seqSuffix(cv); got != want {
			t.Errorf("seqSuffix(%d) = %q, want %q", cv, got, want)
		}
	}
}

// sameEvents compares triggers by path and type, the event a watcher sees.
func sameEvents(a, b []Trigger) bool {
	return slices.EqualFunc(a, b, func(x, y Trigger) bool { return x.Path == y.Path && x.Type == y.Type })
}

// Apache delivers NodeDeleted only to watchers that may read the node, so
// the trigger carries the ACL the tree no longer has.
func TestDeleteTriggerCarriesACL(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "bob:x"}}}
	if _, r := h.do(Request{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/guarded", ACL: acl}}); r.Err != jute.OK {
		t.Fatalf("create: %v", r.Err)
	}
	_, r := h.do(Request{Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/guarded", Version: -1}})
	if r.Err != jute.OK || len(r.Triggers) != 2 {
		t.Fatalf("delete: %v %v", r.Err, r.Triggers)
	}
	if got := r.Triggers[0]; got.Type != jute.EventNodeDeleted || !slices.Equal(got.ACL, acl) {
		t.Errorf("NodeDeleted trigger %+v; want the deleted node's ACL %v", got, acl)
	}
	if r.Triggers[1].ACL != nil {
		t.Errorf("NodeChildrenChanged trigger carries an ACL: %+v", r.Triggers[1])
	}
}

// A plain create with a TTL mode has no TTL to give: Apache's
// MultiOperationRecord cannot build the op, and the whole multi fails with
// MarshallingError and no per-op results (checked against Apache 3.8:
// interop TestMultiContainerAndTTLFlags).
func TestMultiCreateWithTTLFlagIsMarshallingError(t *testing.T) {
	for _, flags := range []int32{jute.FlagPersistentWithTTL, jute.FlagPersistentSequentialWithTTL} {
		h := newHarness(t, PrepConfig{ExtendedTypes: true})
		_, r := h.do(Request{Op: jute.OpMulti, Record: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/ttl", ACL: open, Flags: flags}},
		}}})
		if r.Err != jute.MarshallingError || len(r.Multi) != 0 {
			t.Errorf("flags %d: err %v, results %v; want MarshallingError and none", flags, r.Err, r.Multi)
		}
		if h.st.Tree.Exists("/ttl") {
			t.Errorf("flags %d: node created", flags)
		}
	}
}

// Ref: Apache's PrepRequestProcessor checkSession and QuorumTest
// testSessionMoved: once a session's client reattached to another server
// (setOwner), a request that comes through the server it left fails with
// SessionMoved, from the moment the move is prepped; requests through the
// new owner, closeSession and standalone requests (Server 0) go on.
func TestSessionMoved(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	set := func(server uint64) *Txn {
		return h.prep(Request{SessionID: sess1, Server: server, Op: jute.OpSetData,
			Record: &jute.SetDataRequest{Path: "/", Data: []byte("x"), Version: -1}})
	}
	if tx := set(1); tx.Type != jute.OpSetData {
		t.Fatalf("before any move (owner unknown): %v", tx)
	}
	move := h.prep(Request{SessionID: sess1, Server: 2, Op: OpSetOwner})
	if tx := set(1); tx.Type != jute.OpError || tx.Body.(*ErrorTxn).Err != jute.SessionMoved {
		t.Errorf("through the old server, move prepped: %v; want SessionMoved", tx)
	}
	if r := h.apply(move); r.Err != jute.OK || h.st.Sessions[sess1].Owner != 2 {
		t.Fatalf("setOwner applied: %+v, owner %d", r, h.st.Sessions[sess1].Owner)
	}
	h.p.Reset() // the committed owner counts now
	if tx := set(1); tx.Type != jute.OpError || tx.Body.(*ErrorTxn).Err != jute.SessionMoved {
		t.Errorf("through the old server, move applied: %v; want SessionMoved", tx)
	}
	for _, server := range []uint64{2, 0} {
		if tx := set(server); tx.Type != jute.OpSetData {
			t.Errorf("through server %d: %v", server, tx)
		}
	}
	if tx := h.prep(Request{SessionID: sess1, Server: 1, Op: jute.OpCloseSession}); tx.Type != jute.OpCloseSession {
		t.Errorf("closeSession through the old server: %v", tx)
	}
	if tx := h.prep(Request{SessionID: 0x999, Server: 3, Op: OpSetOwner}); tx.Type != jute.OpError {
		t.Errorf("setOwner of an unknown session: %v", tx)
	}
}
