package txn

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// sampleTxns has one txn of every type, with nil and empty buffers.
func sampleTxns() []*Txn {
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h"}}}
	hdr := func(op jute.Op, body jute.Record) *Txn {
		return &Txn{SessionID: sess1, Cxid: 7, Time: 1700000000000, Type: op, Body: body}
	}
	return []*Txn{
		hdr(jute.OpCreate, &CreateTxn{Path: "/a", Data: []byte("x"), ACL: acl, Ephemeral: true, ParentCVersion: 3}),
		hdr(jute.OpCreate2, &CreateTxn{Path: "/a", Data: nil, ACL: acl, ParentCVersion: -5}),
		hdr(jute.OpCreateContainer, &CreateContainerTxn{Path: "/c", Data: []byte{}, ACL: acl, ParentCVersion: 1}),
		hdr(jute.OpCreateTTL, &CreateTTLTxn{Path: "/t", Data: []byte("d"), ACL: acl, ParentCVersion: 2, TTL: 1000}),
		hdr(jute.OpDelete, &DeleteTxn{Path: "/a"}),
		hdr(jute.OpDeleteContainer, &DeleteTxn{Path: "/c"}),
		hdr(jute.OpSetData, &SetDataTxn{Path: "/a", Data: []byte("y"), Version: 4}),
		hdr(jute.OpCheck, &CheckVersionTxn{Path: "/a", Version: 5}),
		hdr(jute.OpSetACL, &SetACLTxn{Path: "/a", ACL: acl, Version: 2}),
		hdr(jute.OpError, &ErrorTxn{Err: jute.NoNode}),
		hdr(jute.OpCreateSession, &CreateSessionTxn{TimeoutMs: 30000, Password: []byte("0123456789abcdef")}),
		hdr(jute.OpCloseSession, &CloseSessionTxn{Paths: []string{"/e1", "/e2"}}),
		hdr(jute.OpCloseSession, &CloseSessionTxn{Paths: []string{}}),
		hdr(jute.OpMulti, &MultiTxn{Ops: []SubTxn{
			{Type: jute.OpCreate, Body: &CreateTxn{Path: "/m", ACL: acl, ParentCVersion: 1}},
			{Type: jute.OpSetData, Body: &SetDataTxn{Path: "/m", Data: []byte("z"), Version: 1}},
			{Type: jute.OpError, Body: &ErrorTxn{Err: jute.RuntimeInconsistency}},
		}}),
		hdr(jute.OpMulti, &MultiTxn{Ops: []SubTxn{}}),
		hdr(OpRestore, &RestoreTxn{Nodes: []RestoreNode{
			{Path: "/", Data: []byte("r"), ACL: acl},
			{Path: "/a", Data: []byte("x"), ACL: acl, Stat: tree.StatPersisted{Czxid: 5, Mzxid: 6, Ctime: 7, Mtime: 8,
				Version: 1, Cversion: 2, Aversion: 3, EphemeralOwner: sess1, Pzxid: 9}},
		}, Sessions: []RestoreSession{{ID: sess1, TimeoutMs: 30000, Password: []byte("p")}}}),
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, want := range sampleTxns() {
		b := want.Marshal()
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%v: %v", want, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %v\nwant %v", got, want)
		}
		if again := got.Marshal(); !bytes.Equal(again, b) {
			t.Errorf("%v: re-encoding differs", want)
		}
	}
}

// TestMarshalLayout pins the log format: a change here breaks every
// existing log and needs a new FormatVersion.
func TestMarshalLayout(t *testing.T) {
	tx := &Txn{SessionID: 1, Cxid: 2, Time: 3, Type: jute.OpDelete, Body: &DeleteTxn{Path: "/a"}}
	want := []byte{
		1,                      // format
		0, 0, 0, 0, 0, 0, 0, 1, // session
		0, 0, 0, 2, // cxid
		0, 0, 0, 0, 0, 0, 0, 3, // time
		0, 0, 0, 2, // type delete
		0, 0, 0, 2, '/', 'a', // path
	}
	if got := tx.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("Marshal = %v, want %v", got, want)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	good := sampleTxns()[0].Marshal()
	multi := sampleTxns()[13].Marshal()
	badSub := append([]byte(nil), multi...)
	// The first op's type is after header (1+8+4+8+4) and count (4).
	badSub[29+3] = byte(jute.OpSetACL)
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, jute.ErrShort},
		{"version", append([]byte{9}, good[1:]...), ErrVersion},
		{"short header", good[:10], jute.ErrShort},
		{"short body", good[:len(good)-1], jute.ErrShort},
		{"trailing", append(append([]byte(nil), good...), 0), jute.ErrBadLength},
		{"type", func() []byte {
			b := append([]byte(nil), good...)
			b[24] = 99
			return b
		}(), ErrType},
		{"multi op type", badSub, ErrType},
	}
	for _, tc := range tests {
		if _, err := Unmarshal(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestUnmarshalDoesNotAlias: data decoded from a log entry must survive
// the entry's buffer being reused.
func TestUnmarshalDoesNotAlias(t *testing.T) {
	b := (&Txn{Type: jute.OpSetData, Body: &SetDataTxn{Path: "/a", Data: []byte("abc")}}).Marshal()
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if d := got.Body.(*SetDataTxn).Data; string(d) != "abc" {
		t.Errorf("data aliased the input: %q", d)
	}
}

// UnmarshalShared decodes what Unmarshal does, with a create's or a
// setData's data in the entry's bytes; and applying such a txn copies its
// data into the tree, so the entry may be reused afterwards (which is why
// the replica may decode committed entries this way).
func TestUnmarshalShared(t *testing.T) {
	for _, tx := range sampleTxns() {
		b := tx.Marshal()
		want, err := Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalShared(b)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: UnmarshalShared = %v, %v; Unmarshal gave %v", tx.Type, got, err, want)
		}
	}

	h := newHarness(t, PrepConfig{})
	for i, tx := range []*Txn{
		{SessionID: sess1, Type: jute.OpCreate, Body: &CreateTxn{Path: "/a", Data: []byte("created"), ACL: []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}}},
		{SessionID: sess1, Type: jute.OpSetData, Body: &SetDataTxn{Path: "/a", Data: []byte("set"), Version: 1}},
	} {
		b := tx.Marshal()
		shared, err := UnmarshalShared(b)
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		switch body := shared.Body.(type) {
		case *CreateTxn:
			data = body.Data
		case *SetDataTxn:
			data = body.Data
		}
		want := string(data)
		at := bytes.Index(b, data)
		b[at] ^= 0xff
		if data[0] == want[0] {
			t.Fatalf("%v: the data was copied, not shared with the entry", tx.Type)
		}
		b[at] ^= 0xff
		if res := Apply(h.st, shared, int64(100+i)); res.Err != jute.OK {
			t.Fatalf("%v: %v", tx.Type, res.Err)
		}
		clear(b)
		if got, _, err := h.st.Tree.Get("/a"); err != nil || string(got) != want {
			t.Fatalf("after %v and the entry reused: /a holds %q, %v; want %q", tx.Type, got, err, want)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, tx := range sampleTxns() {
		f.Add(tx.Marshal())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := Unmarshal(b)
		if err != nil {
			return
		}
		// The input may be non-canonical (a boolean byte of 2, a string
		// length of -1); its decoding must survive a round trip.
		again, err := Unmarshal(tx.Marshal())
		if err != nil || !reflect.DeepEqual(again, tx) {
			t.Fatalf("decoded %v, which does not round trip: %v", tx, err)
		}
		if shared, err := UnmarshalShared(b); err != nil || !reflect.DeepEqual(shared, tx) {
			t.Fatalf("UnmarshalShared decoded %v, %v; Unmarshal %v", shared, err, tx)
		}
		// Whatever decodes must apply without panicking.
		h := newHarness(t, PrepConfig{})
		Apply(h.st, tx, 100)
		if err := h.st.Tree.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	})
}
