package txn

import (
	"bytes"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

func restoreBody() *RestoreTxn {
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	return &RestoreTxn{
		Nodes: []RestoreNode{
			{Path: "/", Data: []byte{}, ACL: open},
			{Path: "/app", Data: []byte("v1"), ACL: open, Stat: tree.StatPersisted{Czxid: 3, Mzxid: 4, Version: 1}},
			{Path: "/app/e", Data: []byte("e"), ACL: open, Stat: tree.StatPersisted{Czxid: 5, Mzxid: 5, EphemeralOwner: sess1}},
		},
		Sessions: []RestoreSession{{ID: sess1, TimeoutMs: 30000, Password: []byte("from-snapshot")}},
	}
}

// A restore replaces the tree and the sessions, keeps the membership and
// a live session's password, and applying it twice leaves the state it
// leaves once (a replay after a restart).
func TestApplyRestore(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	h.mustDo(Request{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/gone", ACL: open}})
	h.st.Tree.Restore(tree.ConfigPath, []byte("server.1=a:1:2\nversion=0"), nil, tree.StatPersisted{Mzxid: 2})
	livePW := h.st.Sessions[sess1].Password

	tx := h.p.Prep(Request{Op: OpRestore, Record: restoreBody(), Time: h.now})
	if tx.Type != OpRestore {
		t.Fatalf("prepped %v", tx)
	}
	for i := range 2 {
		if r := Apply(h.st, tx, int64(100+i)); r.Err != jute.OK {
			t.Fatalf("apply %d: %v", i, r.Err)
		}
	}
	if _, ok := h.st.Tree.Lookup("/gone"); ok {
		t.Error("/gone survived the restore")
	}
	if d, _, err := h.st.Tree.Get("/app"); err != nil || string(d) != "v1" {
		t.Errorf("/app: %q %v", d, err)
	}
	if eph := h.st.Tree.Ephemerals(sess1); len(eph) != 1 || eph[0] != "/app/e" {
		t.Errorf("ephemerals of the restored session: %v", eph)
	}
	if d, _, _ := h.st.Tree.Get(tree.ConfigPath); !bytes.HasPrefix(d, []byte("server.1=")) {
		t.Errorf("the membership was replaced: %q", d)
	}
	if len(h.st.Sessions) != 1 || !bytes.Equal(h.st.Sessions[sess1].Password, livePW) {
		t.Errorf("sessions %+v", h.st.Sessions)
	}
	if err := h.st.Tree.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// A restore whose tree does not hold together never reaches the log, and
// one that did (from a log written elsewhere) changes nothing.
func TestRestoreRefused(t *testing.T) {
	h := newHarness(t, PrepConfig{})
	orphan := restoreBody()
	orphan.Nodes = orphan.Nodes[2:] // /app/e without /app
	if tx := h.p.Prep(Request{Op: OpRestore, Record: orphan}); tx.Type != jute.OpError {
		t.Errorf("an orphan node was prepped: %v", tx)
	}
	if tx := h.p.Prep(Request{SessionID: sess1, Op: OpRestore, Record: restoreBody()}); tx.Type != jute.OpError {
		t.Errorf("a client's restore was prepped: %v", tx)
	}
	before := len(h.st.Sessions)
	if r := Apply(h.st, &Txn{Type: OpRestore, Body: orphan}, 50); r.Err != jute.BadArguments {
		t.Errorf("apply: %v", r.Err)
	}
	if len(h.st.Sessions) != before {
		t.Error("a refused restore changed the sessions")
	}
}
