package jute

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// requestSamples has a body for every opcode a client may send; a nil
// record means the op has no body.
func requestSamples() []struct {
	op  Op
	rec Record
} {
	create := &CreateRequest{Path: "/a", Data: []byte("d"), ACL: openACL, Flags: FlagEphemeral}
	return []struct {
		op  Op
		rec Record
	}{
		{OpExists, &PathWatch{Path: "/a", Watch: true}},
		{OpGetData, &PathWatch{Path: "/a", Watch: true}},
		{OpGetChildren, &PathWatch{Path: "/a"}},
		{OpGetChildren2, &PathWatch{Path: "/a", Watch: true}},
		{OpGetACL, &PathRequest{Path: "/a"}},
		{OpSync, &PathRequest{Path: "/"}},
		{OpGetAllChildrenNumber, &PathRequest{Path: "/a"}},
		{OpGetEphemerals, &PathRequest{Path: "/"}},
		{OpCreate, create},
		{OpCreate2, create},
		{OpCreateContainer, &CreateRequest{Path: "/c", Data: []byte{}, ACL: openACL, Flags: FlagContainer}},
		{OpCreateTTL, &CreateTTLRequest{Path: "/t", ACL: openACL, Flags: FlagPersistentSequentialWithTTL, TTL: 1}},
		{OpDelete, &PathVersion{Path: "/a", Version: -1}},
		{OpCheck, &PathVersion{Path: "/a", Version: 3}},
		{OpSetData, &SetDataRequest{Path: "/a", Data: []byte("v"), Version: -1}},
		{OpSetACL, &SetACLRequest{Path: "/a", ACL: twoACLs, Version: 0}},
		{OpMulti, &MultiRequest{Ops: []MultiOp{{OpCreate, create}, {OpDelete, &PathVersion{Path: "/b", Version: 1}}}}},
		{OpMultiRead, &MultiRequest{Ops: []MultiOp{{OpGetData, &PathWatch{Path: "/a"}}}}},
		{OpReconfig, &ReconfigRequest{NewMembers: "server.1=h:1:2;3", CurConfigID: 0x100000000}},
		{OpAddWatch, &AddWatchRequest{Path: "/w", Mode: AddWatchPersistent}},
		{OpCheckWatches, &WatchTypeRequest{Path: "/w", Type: WatcherData}},
		{OpRemoveWatches, &WatchTypeRequest{Path: "/w", Type: WatcherChildren}},
		{OpSetWatches, &SetWatches{RelativeZxid: 5, DataWatches: []string{"/a"}, ExistWatches: []string{}, ChildWatches: []string{}}},
		{OpSetWatches2, &SetWatches2{RelativeZxid: 5, DataWatches: []string{}, ExistWatches: []string{"/x"}, ChildWatches: []string{}, PersistentWatches: []string{}, PersistentRecursiveWatches: []string{"/"}}},
		{OpAuth, &AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{OpSASL, &SASLRequest{Token: []byte{1, 2}}},
		{OpPing, nil},
		{OpCloseSession, nil},
		{OpWhoAmI, nil},
	}
}

// Opcodes that only servers send, or that clients may not send.
var notClientOps = []Op{OpNotification, OpCreateSession, OpDeleteContainer, OpError}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range requestSamples() {
		t.Run(tc.op.String(), func(t *testing.T) {
			var body []byte
			if tc.rec != nil {
				body = Marshal(tc.rec)
			}
			got, err := DecodeRequest(tc.op, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rec == nil {
				if got != nil {
					t.Fatalf("got %+v, want nil", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("got %+v, want %+v", got, tc.rec)
			}

			// Apache ignores bytes after the record.
			got, err = DecodeRequest(tc.op, append(body, 0xde, 0xad, 0xbe, 0xef))
			if err != nil || !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("with trailing bytes: %+v, %v", got, err)
			}

			for cut := 0; cut < len(body); cut++ {
				if _, err := DecodeRequest(tc.op, body[:cut]); !errors.Is(err, ErrShort) {
					t.Fatalf("cut at %d of %d: err = %v, want ErrShort", cut, len(body), err)
				}
			}
		})
	}
}

// Every opcode in codes.go is either decoded or refused on purpose.
func TestDecodeRequestCoversAllOps(t *testing.T) {
	known := map[Op]bool{}
	for _, tc := range requestSamples() {
		known[tc.op] = true
	}
	for _, op := range notClientOps {
		known[op] = true
	}
	for op := range opNames {
		if !known[op] {
			t.Errorf("opcode %v (%d) is neither in requestSamples nor in notClientOps", op, int32(op))
		}
	}
}

func TestDecodeRequestUnknownOp(t *testing.T) {
	ops := append([]Op{10, 23, 99, 108, -3, 1 << 30}, notClientOps...)
	for _, op := range ops {
		if _, err := DecodeRequest(op, Marshal(&PathRequest{Path: "/a"})); !errors.Is(err, ErrUnknownOp) {
			t.Errorf("op %d: err = %v, want ErrUnknownOp", int32(op), err)
		}
	}
}

// Ping, closeSession and whoAmI take no body; Apache ignores any it gets.
func TestDecodeRequestNoBodyIgnoresBytes(t *testing.T) {
	for _, op := range []Op{OpPing, OpCloseSession, OpWhoAmI} {
		rec, err := DecodeRequest(op, []byte{1, 2, 3})
		if rec != nil || err != nil {
			t.Errorf("%v: %v, %v", op, rec, err)
		}
	}
}

// The decoded record does not alias the request buffer, which the server
// reuses for the next frame.
func TestDecodeRequestDoesNotAlias(t *testing.T) {
	body := Marshal(&SetDataRequest{Path: "/p", Data: []byte("data"), Version: 1})
	rec, err := DecodeRequest(OpSetData, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 0xff
	}
	if got := rec.(*SetDataRequest); got.Path != "/p" || string(got.Data) != "data" {
		t.Fatalf("record changed with its input: %+v", got)
	}
}

func TestDecodeRequestFrame(t *testing.T) {
	h := RequestHeader{Xid: 42, Type: OpGetData}
	frame := AppendFrame(nil, &h, &PathWatch{Path: "/a", Watch: true})[4:]
	gotH, rec, err := DecodeRequestFrame(frame)
	if err != nil || gotH != h || !reflect.DeepEqual(rec, &PathWatch{Path: "/a", Watch: true}) {
		t.Fatalf("got %+v %+v %v", gotH, rec, err)
	}

	// A bad body still yields the header, so the server can answer the xid
	// with MarshallingError as Apache does.
	gotH, _, err = DecodeRequestFrame(frame[:RequestHeaderSize+3])
	if !errors.Is(err, ErrShort) || gotH != h {
		t.Fatalf("bad body: %+v %v", gotH, err)
	}
	bad := append(Marshal(&RequestHeader{Xid: 9, Type: 77}), frame[RequestHeaderSize:]...)
	gotH, _, err = DecodeRequestFrame(bad)
	if !errors.Is(err, ErrUnknownOp) || gotH.Xid != 9 {
		t.Fatalf("unknown op: %+v %v", gotH, err)
	}

	for cut := 0; cut < RequestHeaderSize; cut++ {
		if _, _, err := DecodeRequestFrame(frame[:cut]); !errors.Is(err, ErrShort) {
			t.Fatalf("header cut at %d: %v", cut, err)
		}
	}
}

// A request encoded for the wire by Apache's Java client: header then body
// in one frame (bytes from testdata/apache_golden.txt).
func TestDecodeApacheRequestFrame(t *testing.T) {
	g := readGolden(t)
	frame := append(append([]byte{}, g["RequestHeader"]...), g["GetDataRequest"]...)
	h, rec, err := DecodeRequestFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	if h != (RequestHeader{Xid: 7, Type: OpGetData}) || !reflect.DeepEqual(rec, &PathWatch{Path: "/zoo/a", Watch: true}) {
		t.Fatalf("got %+v %+v", h, rec)
	}
	if !bytes.Equal(Marshal(rec), g["GetDataRequest"]) {
		t.Fatal("re-encoding differs")
	}
}
