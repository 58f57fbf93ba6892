package txn

import (
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// Sessions the harness opens.
const (
	sess1 int64 = 0x1000005310f0003
	sess2 int64 = 0x1000005310f0004
)

var (
	open     = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	readOnly = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
)

// harness runs requests through prep and apply the way the replica does:
// each txn gets the next zxid. The log keeps every txn with its zxid, for
// replay tests.
type harness struct {
	t    testing.TB
	st   *State
	p    *Prepper
	zxid int64
	now  int64
	log  []logged
}

type logged struct {
	t    *Txn
	zxid int64
}

func newHarness(t testing.TB, cfg PrepConfig) *harness {
	h := &harness{t: t, st: NewState(tree.New()), now: 1_000_000}
	h.p = NewPrepper(h.st, cfg)
	for _, s := range []int64{sess1, sess2} {
		h.do(Request{SessionID: s, Op: jute.OpCreateSession, Record: &CreateSession{TimeoutMs: 30000, Password: []byte("pw")}})
	}
	return h
}

// prep preps req from sess1 unless it names a session.
func (h *harness) prep(req Request) *Txn {
	if req.SessionID == 0 && req.Op != jute.OpDeleteContainer {
		req.SessionID = sess1
	}
	h.now++
	req.Time = h.now
	return h.p.Prep(req)
}

func (h *harness) apply(t *Txn) Result {
	h.zxid++
	h.log = append(h.log, logged{t, h.zxid})
	r := Apply(h.st, t, h.zxid)
	h.p.Applied(t)
	if err := h.st.Tree.CheckInvariants(); err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) do(req Request) (*Txn, Result) {
	t := h.prep(req)
	return t, h.apply(t)
}

// mustDo runs req and fails the test unless it succeeds.
func (h *harness) mustDo(req Request) Result {
	h.t.Helper()
	_, r := h.do(req)
	if r.Err != jute.OK {
		h.t.Fatalf("%v %v: %v", req.Op, describeRecord(req.Record), r.Err)
	}
	return r
}

func (h *harness) stat(path string) jute.Stat {
	h.t.Helper()
	st, ok := h.st.Tree.Stat(path)
	if !ok {
		h.t.Fatalf("no node %s", path)
	}
	return st
}

func describeRecord(r jute.Record) string {
	switch x := r.(type) {
	case *jute.CreateRequest:
		return x.Path
	case *jute.CreateTTLRequest:
		return x.Path
	case *jute.PathVersion:
		return x.Path
	case *jute.SetDataRequest:
		return x.Path
	case *jute.SetACLRequest:
		return x.Path
	case *jute.PathRequest:
		return x.Path
	}
	return ""
}

// Request builders.

func create(path, data string, flags int32) Request {
	return Request{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: path, Data: bytesOf(data), ACL: open, Flags: flags}}
}

func createOp(op jute.Op, path string, flags int32) Request {
	return Request{Op: op, Record: &jute.CreateRequest{Path: path, ACL: open, Flags: flags}}
}

func createTTL(path string, flags int32, ttl int64) Request {
	return Request{Op: jute.OpCreateTTL, Record: &jute.CreateTTLRequest{Path: path, ACL: open, Flags: flags, TTL: ttl}}
}

func createACL(path string, acl []jute.ACL) Request {
	return Request{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: path, ACL: acl}}
}

func del(path string, version int32) Request {
	return Request{Op: jute.OpDelete, Record: &jute.PathVersion{Path: path, Version: version}}
}

func setData(path, data string, version int32) Request {
	return Request{Op: jute.OpSetData, Record: &jute.SetDataRequest{Path: path, Data: bytesOf(data), Version: version}}
}

func setACL(path string, acl []jute.ACL, version int32) Request {
	return Request{Op: jute.OpSetACL, Record: &jute.SetACLRequest{Path: path, ACL: acl, Version: version}}
}

func check(path string, version int32) Request {
	return Request{Op: jute.OpCheck, Record: &jute.PathVersion{Path: path, Version: version}}
}

func deleteContainer(path string) Request {
	return Request{Op: jute.OpDeleteContainer, Record: &jute.PathRequest{Path: path}}
}

func closeSession(s int64) Request { return Request{SessionID: s, Op: jute.OpCloseSession} }

// multi builds a multi from single-op requests.
func multi(reqs ...Request) Request {
	m := &jute.MultiRequest{}
	for _, r := range reqs {
		m.Ops = append(m.Ops, jute.MultiOp{Op: r.Op, Record: r.Record})
	}
	return Request{Op: jute.OpMulti, Record: m}
}

func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// multiCodes returns the per-op codes of a multi result, OK for ops that
// succeeded.
func multiCodes(r Result) []jute.Code {
	out := make([]jute.Code, len(r.Multi))
	for i, m := range r.Multi {
		out[i] = m.Err
	}
	return out
}

func equalCodes(a, b []jute.Code) bool { return slices.Equal(a, b) }
