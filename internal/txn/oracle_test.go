package txn

import (
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// relStat is the part of a stat the Apache probe printed, with zxids
// relative to the czxid of the probe's parent node.
type relStat struct {
	czxid, mzxid, pzxid       int64
	ver, cver, aver, dlen, nc int32
}

func (h *harness) rel(path string, base int64) relStat {
	h.t.Helper()
	st := h.stat(path)
	return relStat{st.Czxid - base, st.Mzxid - base, st.Pzxid - base, st.Version, st.Cversion, st.Aversion, st.DataLength, st.NumChildren}
}

// TestApacheProbeSequence replays /tmp/probe2.py, a kazoo 2.8 session
// against a standalone Apache ZooKeeper 3.8.0, and checks every number it
// printed. Failed requests consume a zxid there too (they are logged as
// error txns), so the relative zxids line up one for one.
func TestApacheProbeSequence(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	base := h.mustDo(create("/p2probe", "", 0)).Stat.Czxid
	want := func(path string, w relStat) {
		t.Helper()
		if got := h.rel(path, base); got != w {
			t.Errorf("%s: %+v, Apache %+v", path, got, w)
		}
	}
	fail := func(req Request, c jute.Code) {
		t.Helper()
		if _, r := h.do(req); r.Err != c {
			t.Errorf("%v %s: %v, Apache %v", req.Op, describeRecord(req.Record), r.Err, c)
		}
	}
	want("/p2probe", relStat{})
	if r := h.mustDo(create("/p2probe/s-", "", jute.FlagPersistentSequential)); r.Path != "/p2probe/s-0000000000" {
		t.Errorf("first sequential: %s", r.Path)
	}
	want("/p2probe", relStat{pzxid: 1, cver: 1, nc: 1})
	h.mustDo(create("/p2probe/a", "", 0))
	want("/p2probe", relStat{pzxid: 2, cver: 2, nc: 2})
	h.mustDo(del("/p2probe/a", -1))
	want("/p2probe", relStat{pzxid: 3, cver: 3, nc: 1})
	if r := h.mustDo(create("/p2probe/s-", "", jute.FlagPersistentSequential)); r.Path != "/p2probe/s-0000000002" {
		t.Errorf("second sequential: %s", r.Path)
	}
	want("/p2probe", relStat{pzxid: 4, cver: 4, nc: 2})

	h.mustDo(create("/p2probe/b", "xyz", 0))
	want("/p2probe/b", relStat{czxid: 5, mzxid: 5, pzxid: 5, dlen: 3})
	h.mustDo(setData("/p2probe/b", "12", -1))
	want("/p2probe/b", relStat{czxid: 5, mzxid: 6, pzxid: 5, ver: 1, dlen: 2})
	h.mustDo(setData("/p2probe/b", "12", 1))
	want("/p2probe/b", relStat{czxid: 5, mzxid: 7, pzxid: 5, ver: 2, dlen: 2})
	fail(setData("/p2probe/b", "12", 7), jute.BadVersion)
	h.mustDo(setACL("/p2probe/b", open, -1))
	want("/p2probe/b", relStat{czxid: 5, mzxid: 7, pzxid: 5, ver: 2, aver: 1, dlen: 2})
	h.mustDo(setACL("/p2probe/b", open, 1))
	want("/p2probe/b", relStat{czxid: 5, mzxid: 7, pzxid: 5, ver: 2, aver: 2, dlen: 2})
	fail(setACL("/p2probe/b", open, 5), jute.BadVersion)

	h.mustDo(create("/p2probe/e", "", jute.FlagEphemeral))
	want("/p2probe/e", relStat{czxid: 12, mzxid: 12, pzxid: 12})
	if st := h.stat("/p2probe/e"); st.EphemeralOwner != sess1 {
		t.Errorf("ephemeralOwner %#x, want the session %#x", st.EphemeralOwner, sess1)
	}
	fail(create("/p2probe/e/c", "", 0), jute.NoChildrenForEphemerals)
	want("/p2probe", relStat{pzxid: 12, cver: 6, nc: 4})

	// A failed multi: kazoo showed [RolledBackError (code 0), NoNodeError,
	// RuntimeInconsistency, RuntimeInconsistency] and no change.
	_, r := h.do(multi(create("/p2probe/m1", "", 0), create("/p2probe/nonexist/x", "", 0),
		create("/p2probe/m2", "", 0), setData("/p2probe/b", "q", -1)))
	if got, w := multiCodes(r), []jute.Code{jute.OK, jute.NoNode, jute.RuntimeInconsistency, jute.RuntimeInconsistency}; !equalCodes(got, w) {
		t.Errorf("failed multi %v, Apache %v", got, w)
	}
	for _, m := range r.Multi {
		if m.Op != jute.OpError {
			t.Errorf("failed multi result type %v, Apache sends error results only", m.Op)
		}
	}
	want("/p2probe", relStat{pzxid: 12, cver: 6, nc: 4})

	_, r = h.do(multi(create("/p2probe/m1", "", 0), del("/p2probe/m1", -1),
		create("/p2probe/m3", "x", 0), setData("/p2probe/m3", "q", -1), check("/p2probe/m3", 1)))
	if r.Err != jute.OK || len(r.Multi) != 5 {
		t.Fatalf("multi: %v %v", r.Err, r.Multi)
	}
	if st := r.Multi[3].Record.(*jute.StatResponse).Stat; st.Version != 1 || st.Czxid-base != 15 || st.Mzxid-base != 15 || st.Pzxid-base != 15 {
		t.Errorf("multi setData stat %+v", st)
	}
	want("/p2probe", relStat{pzxid: 15, cver: 9, nc: 5})
	want("/p2probe/m3", relStat{czxid: 15, mzxid: 15, pzxid: 15, ver: 1, dlen: 1})

	_, r = h.do(multi(check("/p2probe/m3", 5), create("/p2probe/m4", "", 0)))
	if got, w := multiCodes(r), []jute.Code{jute.BadVersion, jute.RuntimeInconsistency}; !equalCodes(got, w) {
		t.Errorf("multi check first %v, Apache %v", got, w)
	}
	_, r = h.do(multi(create("/p2probe/m5", "", 0), check("/p2probe/m3", 5)))
	if got, w := multiCodes(r), []jute.Code{jute.OK, jute.BadVersion}; !equalCodes(got, w) {
		t.Errorf("multi check last %v, Apache %v", got, w)
	}
	_, r = h.do(multi(create("/p2probe/q-", "", jute.FlagPersistentSequential), create("/p2probe/q-", "", jute.FlagPersistentSequential)))
	for i, w := range []string{"/p2probe/q-0000000007", "/p2probe/q-0000000008"} {
		if got := r.Multi[i].Record.(*jute.CreateResponse).Path; got != w {
			t.Errorf("multi sequential %d: %s, Apache %s", i, got, w)
		}
	}
	want("/p2probe", relStat{pzxid: 18, cver: 11, nc: 7})

	fail(del("/p2probe", -1), jute.NotEmpty)
	fail(del("/p2probe/b", 9), jute.BadVersion)
	fail(create("/p2probe/b", "", 0), jute.NodeExists)
	fail(create("/p2probe/zz/b", "", 0), jute.NoNode)
	fail(del("/zookeeper", -1), jute.BadArguments)
	fail(del("/zookeeper/quota", -1), jute.BadArguments)
	fail(setData("/zookeeper/config", "x", -1), jute.NoAuth)
	h.mustDo(setData("/zookeeper", "x", -1))
	if st := h.stat("/zookeeper"); st.Version != 1 || st.Cversion != -2 || st.DataLength != 1 || st.Czxid != 0 {
		t.Errorf("/zookeeper after set: %+v (Apache: ver=1 cver=-2 dlen=1 czxid=0)", st)
	}
	h.mustDo(create("/zookeeper/quota/abc", "", 0)) // Apache allows it
}

// TestApacheRawRequests replays /tmp/raw.py: requests sent byte by byte to
// Apache 3.8.0 (extendedTypesEnabled=true, reconfigEnabled=false) under an
// existing /raw, with the codes it answered.
func TestApacheRawRequests(t *testing.T) {
	h := newHarness(t, PrepConfig{ExtendedTypes: true})
	h.mustDo(create("/raw", "", 0))
	tests := []struct {
		name string
		req  Request
		want jute.Code
		path string // the created path, if any
	}{
		{"empty acl", createACL("/raw/a", []jute.ACL{}), jute.InvalidACL, ""},
		{"nil acl", createACL("/raw/a", nil), jute.InvalidACL, ""},
		{"duplicate acl", createACL("/raw/dupacl", append(open[:1:1], open...)), jute.OK, "/raw/dupacl"},
		{"create with ttl flag", createOp(jute.OpCreate, "/raw/b", jute.FlagPersistentWithTTL), jute.BadArguments, ""},
		{"create with container flag", createOp(jute.OpCreate, "/raw/cf", jute.FlagContainer), jute.OK, "/raw/cf"},
		{"flag 7", createOp(jute.OpCreate, "/raw/c", 7), jute.BadArguments, ""},
		{"flag -1", createOp(jute.OpCreate, "/raw/c", -1), jute.BadArguments, ""},
		{"ttl 0", createTTL("/raw/d", jute.FlagPersistentWithTTL, 0), jute.BadArguments, ""},
		{"ttl -1", createTTL("/raw/d", jute.FlagPersistentWithTTL, -1), jute.BadArguments, ""},
		{"ttl max+1", createTTL("/raw/d", jute.FlagPersistentWithTTL, 1<<40), jute.BadArguments, ""},
		{"createTTL flag 0 ttl 5", createTTL("/raw/d", 0, 5), jute.BadArguments, ""},
		// Apache accepts this one and then dies applying it.
		{"createTTL flag 0 ttl -1", createTTL("/raw/d", 0, -1), jute.BadArguments, ""},
		{"sequential ttl", createTTL("/raw/seqttl-", jute.FlagPersistentSequentialWithTTL, 5000), jute.OK, "/raw/seqttl-0000000002"},
		{"createContainer flag 0", createOp(jute.OpCreateContainer, "/raw/cc", 0), jute.OK, "/raw/cc"},
		{"createContainer sequential", createOp(jute.OpCreateContainer, "/raw/ccs-", jute.FlagPersistentSequential), jute.OK, "/raw/ccs-0000000004"},
		{"create2", createOp(jute.OpCreate2, "/raw/e", 0), jute.OK, "/raw/e"},
		{"trailing slash", create("/raw/e/", "", 0), jute.BadArguments, ""},
		{"sequential trailing slash", create("/raw/e/", "", jute.FlagPersistentSequential), jute.OK, "/raw/e/0000000000"},
		{"double slash", create("/raw//x", "", 0), jute.NoNode, ""},
		{"dot segment", create("/raw/./x", "", 0), jute.NoNode, ""},
		{"dotdot", create("/raw/..", "", 0), jute.BadArguments, ""},
		{"sequential dot", create("/raw/.", "", jute.FlagPersistentSequential), jute.OK, "/raw/.0000000006"},
		{"no slash", create("raw", "", 0), jute.BadArguments, ""},
		{"empty path", create("", "", 0), jute.BadArguments, ""},
		{"root", create("/", "", 0), jute.NodeExists, ""},
		{"control char", create("/raw/a\x01b", "", 0), jute.BadArguments, ""},
		{"null char", create("/raw/a\x00b", "", 0), jute.BadArguments, ""},
		{"null char, no parent", create("/nope/a\x00b", "", 0), jute.BadArguments, ""},
		{"bad path, no parent", create("/nope/./b", "", 0), jute.NoNode, ""},
		{"emoji", create("/raw/\U0001F600", "", 0), jute.BadArguments, ""},
		{"private use", create("/raw/\ue000", "", 0), jute.BadArguments, ""},
		{"not utf-8", create("/raw/\xff\xfe", "", 0), jute.BadArguments, ""},
		{"0x7f", create("/raw/\x7f", "", 0), jute.BadArguments, ""},
		{"first allowed after C1", create("/raw/\u00a0", "", 0), jute.OK, "/raw/\u00a0"},
		{"delete /", del("/", -1), jute.BadArguments, ""},
		{"delete /zookeeper/config", del("/zookeeper/config", -1), jute.BadArguments, ""},
		{"delete no slash", del("raw", -1), jute.BadArguments, ""},
		{"delete trailing slash", del("/raw/e/", -1), jute.NoNode, ""},
		{"delete no parent", del("/nope/x", -1), jute.NoNode, ""},
		{"setData bad path", setData("/raw/", "x", -1), jute.BadArguments, ""},
		{"setData no node", setData("/raw/zzz", "x", -1), jute.NoNode, ""},
		{"setACL empty", setACL("/raw/e", []jute.ACL{}, -1), jute.InvalidACL, ""},
		{"reconfig", Request{Op: jute.OpReconfig, Record: &jute.ReconfigRequest{CurConfigID: -1}}, jute.ReconfigDisabled, ""},
	}
	for _, tc := range tests {
		_, r := h.do(tc.req)
		if r.Err != tc.want || r.Path != tc.path && tc.path != "" {
			t.Errorf("%s: %v %q, Apache %v %q", tc.name, r.Err, r.Path, tc.want, tc.path)
		}
	}
	// The create op with the container flag made a persistent node, the
	// createContainer ops containers.
	for path, owner := range map[string]int64{"/raw/cf": 0, "/raw/cc": -1 << 63, "/raw/ccs-0000000004": -1 << 63} {
		if info, _ := h.st.Tree.Lookup(path); info.Stat.EphemeralOwner != owner {
			t.Errorf("%s: owner %#x, want %#x", path, info.Stat.EphemeralOwner, owner)
		}
	}

	rawMulti(t, h)
}

// rawMulti goes on with the multis of /tmp/raw.py and the result types
// Apache 3.8.0 put on the wire.
func rawMulti(t *testing.T, h *harness) {
	type res struct {
		op   jute.Op
		err  jute.Code
		path string
	}
	tests := []struct {
		name string
		req  Request
		want []res
	}{
		{"fail in the middle", multi(create("/raw/m1", "", 0), create("/raw/nope/x", "", 0), create("/raw/m2", "", 0)),
			[]res{{jute.OpError, jute.OK, ""}, {jute.OpError, jute.NoNode, ""}, {jute.OpError, jute.RuntimeInconsistency, ""}}},
		{"create2 is a create", multi(createOp(jute.OpCreate2, "/raw/m3", 0)),
			[]res{{jute.OpCreate, jute.OK, "/raw/m3"}}},
		{"container by flags, ttl", multi(createOp(jute.OpCreateContainer, "/raw/m4", 0), createTTL("/raw/m5", jute.FlagPersistentWithTTL, 1000)),
			[]res{{jute.OpCreate, jute.OK, "/raw/m4"}, {jute.OpCreate2, jute.OK, "/raw/m5"}}},
		{"sequential", multi(create("/raw/s-", "", jute.FlagPersistentSequential), create("/raw/s-", "", jute.FlagPersistentSequential)),
			[]res{{jute.OpCreate, jute.OK, "/raw/s-0000000011"}, {jute.OpCreate, jute.OK, "/raw/s-0000000012"}}},
		{"empty", multi(), []res{}},
		{"delete non-empty then create", multi(del("/raw/e", -1), create("/raw/e", "new", 0)),
			[]res{{jute.OpError, jute.NotEmpty, ""}, {jute.OpError, jute.RuntimeInconsistency, ""}}},
		{"parent and child", multi(create("/raw/pp", "", 0), create("/raw/pp/cc", "", 0), del("/raw/pp/cc", -1), del("/raw/pp", -1)),
			[]res{{jute.OpCreate, jute.OK, "/raw/pp"}, {jute.OpCreate, jute.OK, "/raw/pp/cc"}, {jute.OpDelete, jute.OK, ""}, {jute.OpDelete, jute.OK, ""}}},
		{"fail first", multi(del("/raw/zz", -1), create("/raw/m9", "", 0)),
			[]res{{jute.OpError, jute.NoNode, ""}, {jute.OpError, jute.RuntimeInconsistency, ""}}},
	}
	for _, tc := range tests {
		_, r := h.do(tc.req)
		got := make([]res, len(r.Multi))
		for i, m := range r.Multi {
			got[i] = res{op: m.Op, err: m.Err}
			switch x := m.Record.(type) {
			case *jute.CreateResponse:
				got[i].path = x.Path
			case *jute.Create2Response:
				got[i].path = x.Path
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %+v, Apache %+v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %+v, Apache %+v", tc.name, got, tc.want)
				break
			}
		}
	}
	// The container made by flags 0 in a multi is a plain node; the TTL
	// node is a TTL node.
	if info, _ := h.st.Tree.Lookup("/raw/m4"); info.Stat.EphemeralOwner != 0 {
		t.Errorf("/raw/m4 owner %#x", info.Stat.EphemeralOwner)
	}
	if info, _ := h.st.Tree.Lookup("/raw/m5"); info.Stat.EphemeralOwner>>56 != -1 {
		t.Errorf("/raw/m5 owner %#x", info.Stat.EphemeralOwner)
	}
}
