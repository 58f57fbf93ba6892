package jute

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"runtime"
	"testing"
)

type sample struct {
	name string
	rec  Record
	// optTail is the number of trailing bytes that Decode treats as
	// optional (the readOnly byte of the connect records): cutting them off
	// still decodes.
	optTail int
}

// samples has a populated value of every record type of the protocol.
// Slices are non-nil: a nil vector is written as an empty one (see
// TestNilVectorsEncodeEmpty), so it cannot survive a round trip.
func samples() []sample {
	return []sample{
		{"Id", &Id{Scheme: "digest", ID: "u:h="}, 0},
		{"ACL", &ACL{Perms: PermRead | PermAdmin, ID: Id{Scheme: "ip", ID: "10.0.0.0/8"}}, 0},
		{"Stat", &Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7, EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}, 0},
		{"ConnectRequest", &ConnectRequest{LastZxidSeen: 0x500000007, TimeOut: 30000, SessionID: 0x1234, Passwd: testPasswd}, 0},
		{"ConnectRequestRO", &ConnectRequest{ProtocolVersion: 0, TimeOut: 4000, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true}, 1},
		{"ConnectResponse", &ConnectResponse{TimeOut: 10000, SessionID: -2, Passwd: testPasswd}, 0},
		{"ConnectResponseRO", &ConnectResponse{TimeOut: 10000, SessionID: 7, Passwd: testPasswd, HasReadOnly: true}, 1},
		{"RequestHeader", &RequestHeader{Xid: 7, Type: OpGetData}, 0},
		{"ReplyHeader", &ReplyHeader{Xid: -1, Zxid: 0x100000002, Err: NoNode}, 0},
		{"MultiHeader", &MultiHeader{Type: OpCreate, Done: false, Err: -1}, 0},
		{"AuthPacket", &AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("user:pass")}, 0},
		{"SetWatches", &SetWatches{RelativeZxid: 9, DataWatches: []string{"/a"}, ExistWatches: []string{}, ChildWatches: []string{"/b", "/c"}}, 0},
		{"SetWatches2", &SetWatches2{RelativeZxid: 9, DataWatches: []string{"/a"}, ExistWatches: []string{"/x"}, ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r", "/s"}}, 0},
		{"PathWatch", &PathWatch{Path: "/zoo", Watch: true}, 0},
		{"PathRequest", &PathRequest{Path: "/zoo"}, 0},
		{"CreateRequest", &CreateRequest{Path: "/n-", Data: []byte("hi"), ACL: twoACLs, Flags: FlagEphemeralSequential}, 0},
		{"CreateRequestNilData", &CreateRequest{Path: "/n", ACL: openACL}, 0},
		{"CreateTTLRequest", &CreateTTLRequest{Path: "/t", Data: []byte{}, ACL: openACL, Flags: FlagPersistentWithTTL, TTL: 60000}, 0},
		{"PathVersion", &PathVersion{Path: "/a", Version: -1}, 0},
		{"SetDataRequest", &SetDataRequest{Path: "/a", Data: []byte("v"), Version: 3}, 0},
		{"SetACLRequest", &SetACLRequest{Path: "/a", ACL: openACL, Version: 2}, 0},
		{"ReconfigRequest", &ReconfigRequest{JoiningServers: "server.4=h:1:2;3", LeavingServers: "1", NewMembers: "", CurConfigID: -1}, 0},
		{"AddWatchRequest", &AddWatchRequest{Path: "/w", Mode: AddWatchPersistentRecursive}, 0},
		{"WatchTypeRequest", &WatchTypeRequest{Path: "/w", Type: WatcherAny}, 0},
		{"SASLRequest", &SASLRequest{Token: []byte("tok")}, 0},
		{"MultiRequest", &MultiRequest{Ops: []MultiOp{
			{OpCreate, &CreateRequest{Path: "/m", Data: []byte("x"), ACL: openACL}},
			{OpCreate2, &CreateRequest{Path: "/m2", ACL: openACL}},
			{OpCreateContainer, &CreateRequest{Path: "/c", ACL: openACL, Flags: FlagContainer}},
			{OpCreateTTL, &CreateTTLRequest{Path: "/t", ACL: openACL, Flags: FlagPersistentWithTTL, TTL: 5}},
			{OpDelete, &PathVersion{Path: "/m/old", Version: 4}},
			{OpCheck, &PathVersion{Path: "/m", Version: 1}},
			{OpSetData, &SetDataRequest{Path: "/m", Data: []byte("z"), Version: -1}},
		}}, 0},
		{"MultiRead", &MultiRequest{Ops: []MultiOp{
			{OpGetData, &PathWatch{Path: "/a"}},
			{OpGetChildren, &PathWatch{Path: "/b"}},
		}}, 0},
		{"CreateResponse", &CreateResponse{Path: "/n-0000000001"}, 0},
		{"Create2Response", &Create2Response{Path: "/n-0000000001", Stat: testStat}, 0},
		{"StatResponse", &StatResponse{Stat: testStat}, 0},
		{"GetDataResponse", &GetDataResponse{Data: []byte("hello"), Stat: testStat}, 0},
		{"GetDataResponseNil", &GetDataResponse{Stat: testStat}, 0},
		{"GetChildrenResponse", &GetChildrenResponse{Children: []string{"a", "b"}}, 0},
		{"GetChildren2Response", &GetChildren2Response{Children: []string{"a"}, Stat: testStat}, 0},
		{"GetACLResponse", &GetACLResponse{ACL: twoACLs, Stat: testStat}, 0},
		{"CountResponse", &CountResponse{TotalNumber: 12}, 0},
		{"StringsResponse", &StringsResponse{Strings: []string{"/e1", "/e2"}}, 0},
		{"ClientInfo", &ClientInfo{AuthScheme: "ip", User: "127.0.0.1"}, 0},
		{"WhoAmIResponse", &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "u"}}}, 0},
		{"ErrorResponse", &ErrorResponse{Err: NodeExists}, 0},
		{"MultiResponse", &MultiResponse{Results: []MultiResult{
			{Op: OpCreate, Record: &CreateResponse{Path: "/m"}},
			{Op: OpCreate2, Record: &Create2Response{Path: "/m2", Stat: testStat}},
			{Op: OpDelete},
			{Op: OpSetData, Record: &StatResponse{Stat: testStat}},
			{Op: OpCheck},
			{Op: OpGetData, Record: &GetDataResponse{Data: []byte("d"), Stat: testStat}},
			{Op: OpGetChildren, Record: &GetChildrenResponse{Children: []string{"x"}}},
			{Op: OpError, Err: OK},
			{Op: OpError, Err: NoNode},
		}}, 0},
		{"WatcherEvent", &WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/zoo/a"}, 0},
		{"SASLResponse", &SASLResponse{Token: []byte{}}, 0},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range samples() {
		t.Run(tc.name, func(t *testing.T) {
			b := Marshal(tc.rec)
			got := newLike(tc.rec)
			if err := Unmarshal(b, got); err != nil {
				t.Fatalf("Unmarshal(Marshal(x)): %v", err)
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.rec)
			}
			if b2 := Marshal(got); !bytes.Equal(b2, b) {
				t.Fatalf("re-encoding differs:\n got %x\nwant %x", b2, b)
			}
		})
	}
}

// Every cut of an encoded record short of its end must fail with ErrShort,
// except a cut of only an optional trailing field.
func TestTruncatedFailsWithErrShort(t *testing.T) {
	for _, tc := range samples() {
		t.Run(tc.name, func(t *testing.T) {
			b := Marshal(tc.rec)
			for cut := 0; cut < len(b)-tc.optTail; cut++ {
				err := Unmarshal(b[:cut], newLike(tc.rec))
				if !errors.Is(err, ErrShort) {
					t.Fatalf("cut at %d of %d: err = %v, want ErrShort", cut, len(b), err)
				}
			}
			for cut := len(b) - tc.optTail; cut < len(b); cut++ {
				if err := Unmarshal(b[:cut], newLike(tc.rec)); err != nil {
					t.Fatalf("cut of optional tail at %d: %v", cut, err)
				}
			}
		})
	}
}

// Every struct type declared in records.go and types.go must have a sample,
// so that a record added later cannot miss its codec or its tests.
func TestSamplesCoverAllRecords(t *testing.T) {
	have := map[string]bool{}
	for _, s := range samples() {
		have[reflect.TypeOf(s.rec).Elem().Name()] = true
	}
	fset := token.NewFileSet()
	for _, file := range []string{"records.go", "types.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); !isStruct {
					continue
				}
				switch ts.Name.Name {
				case "MultiOp", "MultiResult": // parts of MultiRequest/MultiResponse
					continue
				}
				if !have[ts.Name.Name] {
					t.Errorf("%s: struct %s has no sample in samples()", file, ts.Name.Name)
				}
			}
		}
	}
}

// Golden vectors written out by hand from zookeeper.jute, one field a line,
// so that a field-order or byte-order mistake in codec and test alike
// cannot cancel out. golden_test.go checks the same records against the
// bytes Apache's own classes write.
func TestHandGolden(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{
			// Ref: zookeeper.jute ConnectRequest; a pre-3.4 client stops after passwd.
			name: "ConnectRequest without readOnly",
			rec:  &ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0x500000007, TimeOut: 30000, SessionID: 0x1234567890abcdef, Passwd: testPasswd},
			want: `
				00000000  // protocolVersion 0
				0000000500000007  // lastZxidSeen
				00007530  // timeOut 30000
				1234567890abcdef  // sessionId
				00000010  // passwd length 16
				0102030405060708090a0b0c0d0e0f10  // passwd`,
		},
		{
			name: "ConnectRequest with readOnly",
			rec:  &ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0, TimeOut: 4000, SessionID: 0, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true},
			want: `
				00000000  // protocolVersion
				0000000000000000  // lastZxidSeen
				00000fa0  // timeOut 4000
				0000000000000000  // sessionId 0: new session
				00000010  // passwd length 16
				00000000000000000000000000000000  // passwd, all zero
				01  // readOnly true`,
		},
		{
			name: "ConnectResponse with readOnly",
			rec:  &ConnectResponse{ProtocolVersion: 0, TimeOut: 10000, SessionID: 0x1234567890abcdef, Passwd: testPasswd, HasReadOnly: true},
			want: `
				00000000  // protocolVersion
				00002710  // timeOut 10000
				1234567890abcdef  // sessionId
				00000010  // passwd length
				0102030405060708090a0b0c0d0e0f10  // passwd
				00  // readOnly false`,
		},
		{
			// Ref: MultiOperationRecord.serialize: header {type, false, -1} + request, then {-1, true, -1}.
			name: "multi create+delete+check",
			rec: &MultiRequest{Ops: []MultiOp{
				{OpCreate, &CreateRequest{Path: "/m", Data: []byte("x"), ACL: openACL, Flags: FlagPersistent}},
				{OpDelete, &PathVersion{Path: "/o", Version: 4}},
				{OpCheck, &PathVersion{Path: "/m", Version: 1}},
			}},
			want: `
				00000001  // header type create
				00  // done false
				ffffffff  // err -1
				00000002 2f6d  // path "/m"
				00000001 78  // data "x"
				00000001  // acl count 1
				0000001f  // perms ALL
				00000005 776f726c64  // scheme "world"
				00000006 616e796f6e65  // id "anyone"
				00000000  // flags persistent
				00000002 00 ffffffff  // header delete
				00000002 2f6f  // path "/o"
				00000004  // version 4
				0000000d 00 ffffffff  // header check
				00000002 2f6d  // path "/m"
				00000001  // version 1
				ffffffff 01 ffffffff  // terminator {-1, true, -1}`,
		},
		{
			// Ref: MultiResponse.serialize; a failed multi answers every op with an error result.
			name: "failed multi response",
			rec: &MultiResponse{Results: []MultiResult{
				{Op: OpError, Err: OK},
				{Op: OpError, Err: NoNode},
				{Op: OpError, Err: RuntimeInconsistency},
			}},
			want: `
				ffffffff 00 00000000  // header {error, false, 0}
				00000000  // ErrorResponse err 0
				ffffffff 00 ffffff9b  // header {error, false, -101}
				ffffff9b  // ErrorResponse err -101 NoNode
				ffffffff 00 fffffffe  // header {error, false, -2}
				fffffffe  // ErrorResponse err -2 RuntimeInconsistency
				ffffffff 01 ffffffff  // terminator`,
		},
		{
			name: "WatcherEvent",
			rec:  &WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/zoo"},
			want: `
				00000004  // type NodeChildrenChanged
				00000003  // state SyncConnected
				00000004  // path length
				2f7a6f6f  // "/zoo"`,
		},
		{
			name: "ReplyHeader",
			rec:  &ReplyHeader{Xid: -2, Zxid: 0x0102030405060708, Err: NoAuth},
			want: `
				fffffffe  // xid -2 (ping)
				0102030405060708  // zxid
				ffffff9a  // err -102 NoAuth`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := hexBytes(t, tc.want)
			if got := Marshal(tc.rec); !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got %x\nwant %x", got, want)
			}
			got := newLike(tc.rec)
			if err := Unmarshal(want, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("decode:\n got %+v\nwant %+v", got, tc.rec)
			}
		})
	}
}

// A nil vector in a protocol record goes out as an empty one, never as a
// null (-1) count; reading -1 still gives nil.
func TestNilVectorsEncodeEmpty(t *testing.T) {
	tests := []struct {
		rec  Record
		want string
	}{
		{&GetChildrenResponse{}, "00000000"},
		{&StringsResponse{}, "00000000"},
		{&WhoAmIResponse{}, "00000000"},
		{&SetWatches{RelativeZxid: 1}, "0000000000000001 00000000 00000000 00000000"},
		{&SetACLRequest{Path: "", Version: 0}, "00000000 00000000 00000000"},
	}
	for _, tc := range tests {
		want := hexBytes(t, tc.want)
		if got := Marshal(tc.rec); !bytes.Equal(got, want) {
			t.Errorf("%T: got %x, want %x", tc.rec, got, want)
		}
	}
	var gc GetChildrenResponse
	if err := Unmarshal(hexBytes(t, "ffffffff"), &gc); err != nil || gc.Children != nil {
		t.Fatalf("decode of a null vector: %v, %#v", err, gc.Children)
	}
}

// Apache's reconfig tells an omitted server list (null) from a given one.
func TestReconfigEmptyIsNull(t *testing.T) {
	rec := &ReconfigRequest{LeavingServers: "3", CurConfigID: -1}
	want := hexBytes(t, `
		ffffffff  // joiningServers null
		00000001 33  // leavingServers "3"
		ffffffff  // newMembers null
		ffffffffffffffff  // curConfigId -1`)
	if got := Marshal(rec); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}

func TestConnectRequestTrailingBytes(t *testing.T) {
	base := Marshal(&ConnectRequest{TimeOut: 1, Passwd: testPasswd})
	// readOnly plus bytes that some future client might add: Apache reads
	// readOnly and ignores the rest.
	b := append(append([]byte{}, base...), 1, 0xde, 0xad)
	var got ConnectRequest
	if err := UnmarshalPrefix(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.HasReadOnly || !got.ReadOnly {
		t.Fatalf("readOnly not read: %+v", got)
	}
	if err := Unmarshal(b, &got); !errors.Is(err, ErrTrailing) {
		t.Fatalf("Unmarshal with trailing bytes: %v, want ErrTrailing", err)
	}
}

func TestMultiRequestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"op that cannot be in a multi", `
			00000003 00 ffffffff  // header exists
			00000002 2f61 00  // PathWatch
			ffffffff 01 ffffffff`, ErrBadMulti},
		{"mixed read and write", `
			00000004 00 ffffffff  // getData
			00000002 2f61 00
			0000000d 00 ffffffff  // check
			00000002 2f61 00000000
			ffffffff 01 ffffffff`, ErrBadMulti},
		{"no terminator", `
			0000000d 00 ffffffff
			00000002 2f61 00000000`, ErrShort},
		{"empty", ``, ErrShort},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m MultiRequest
			err := Unmarshal(hexBytes(t, tc.in), &m)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// Apache ends a multi at the first header with done set, whatever its type.
func TestMultiEndsAtDone(t *testing.T) {
	in := hexBytes(t, `
		0000000d 00 ffffffff  // check
		00000002 2f61 00000007
		00000005 01 00000000  // done, odd type and err`)
	var m MultiRequest
	if err := Unmarshal(in, &m); err != nil {
		t.Fatal(err)
	}
	want := []MultiOp{{OpCheck, &PathVersion{Path: "/a", Version: 7}}}
	if !reflect.DeepEqual(m.Ops, want) {
		t.Fatalf("got %+v", m.Ops)
	}
}

func TestMultiResponseDecodeErrors(t *testing.T) {
	// Result type exists (3) is not one Apache's MultiResponse reads.
	in := hexBytes(t, `
		00000003 00 00000000
		ffffffff 01 ffffffff`)
	var m MultiResponse
	if err := Unmarshal(in, &m); !errors.Is(err, ErrBadMulti) {
		t.Fatalf("err = %v, want ErrBadMulti", err)
	}
}

// An error result's code comes from its ErrorResponse body, as in Apache.
func TestMultiResponseErrorCodeFromBody(t *testing.T) {
	in := hexBytes(t, `
		ffffffff 00 00000000  // header err 0
		ffffff92  // body err NodeExists
		ffffffff 01 ffffffff`)
	var m MultiResponse
	if err := Unmarshal(in, &m); err != nil {
		t.Fatal(err)
	}
	if want := []MultiResult{{Op: OpError, Err: NodeExists}}; !reflect.DeepEqual(m.Results, want) {
		t.Fatalf("got %+v", m.Results)
	}
}

// A failed op given as its own type with a non-OK Err is written as an
// error result.
func TestMultiResponseErrIsErrorResult(t *testing.T) {
	a := Marshal(&MultiResponse{Results: []MultiResult{{Op: OpCreate, Err: NoNode}}})
	b := Marshal(&MultiResponse{Results: []MultiResult{{Op: OpError, Err: NoNode}}})
	if !bytes.Equal(a, b) {
		t.Fatalf("got %x, want %x", a, b)
	}
}

func TestMultiValidate(t *testing.T) {
	tests := []struct {
		name string
		rec  interface{ Validate() error }
		ok   bool
	}{
		{"request ok", &MultiRequest{Ops: []MultiOp{{OpCreate, &CreateRequest{}}, {OpCheck, &PathVersion{}}}}, true},
		{"request wrong record", &MultiRequest{Ops: []MultiOp{{OpCreate, &PathVersion{}}}}, false},
		{"request nil record", &MultiRequest{Ops: []MultiOp{{OpDelete, nil}}}, false},
		{"request op not allowed", &MultiRequest{Ops: []MultiOp{{OpExists, &PathWatch{}}}}, false},
		{"request mixed", &MultiRequest{Ops: []MultiOp{{OpGetData, &PathWatch{}}, {OpDelete, &PathVersion{}}}}, false},
		{"response ok", &MultiResponse{Results: []MultiResult{{Op: OpCreate2, Record: &Create2Response{}}, {Op: OpDelete}, {Op: OpError, Err: NoNode}}}, true},
		{"response create with stat", &MultiResponse{Results: []MultiResult{{Op: OpCreate, Record: &Create2Response{}}}}, false},
		{"response createTTL", &MultiResponse{Results: []MultiResult{{Op: OpCreateTTL, Record: &Create2Response{}}}}, false},
		{"response setData without stat", &MultiResponse{Results: []MultiResult{{Op: OpSetData}}}, false},
		{"response check with body", &MultiResponse{Results: []MultiResult{{Op: OpCheck, Record: &StatResponse{}}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rec.Validate()
			if tc.ok && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrBadMulti) {
				t.Fatalf("err = %v, want ErrBadMulti", err)
			}
		})
	}
}

func TestBadLengths(t *testing.T) {
	tests := []struct {
		name string
		in   string
		rec  Record
		want error
	}{
		{"negative string length", "fffffffe", &PathRequest{}, ErrBadLength},
		{"negative buffer length", "fffffff0", &SASLRequest{}, ErrBadLength},
		{"negative vector count", "80000000", &GetChildrenResponse{}, ErrBadLength},
		{"string longer than input", "7fffffff 2f", &PathRequest{}, ErrShort},
		{"vector longer than input", "7fffffff", &GetChildrenResponse{}, ErrShort},
		{"acl vector longer than input", "00000001 00000001", &GetACLResponse{}, ErrShort},
		{"clientinfo vector longer than input", "00000002 00000000 00000000", &WhoAmIResponse{}, ErrShort},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Unmarshal(hexBytes(t, tc.in), tc.rec)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// A huge length prefix is rejected before anything is allocated for it:
// what a rejection costs (the error value) does not depend on the length.
func TestHugeLengthDoesNotAllocate(t *testing.T) {
	in := hexBytes(t, "7fffffff")
	for _, rec := range []Record{&SASLRequest{}, &GetChildrenResponse{}, &GetACLResponse{}, &WhoAmIResponse{}, &MultiRequest{}} {
		perRun := bytesPerRun(100, func() {
			if err := UnmarshalPrefix(in, rec); err == nil {
				t.Fatal("no error")
			}
		})
		if perRun > 512 {
			t.Errorf("%T: %d bytes allocated to reject a length of 2^31-1", rec, perRun)
		}
	}
}

// bytesPerRun reports the heap bytes that f allocates per call.
func bytesPerRun(runs int, f func()) uint64 {
	f() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// Decoded buffers do not alias the input unless asked to.
func TestBufferCopies(t *testing.T) {
	in := Marshal(&SetDataRequest{Path: "/a", Data: []byte("abc")})
	var x SetDataRequest
	if err := Unmarshal(in, &x); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 0
	}
	if string(x.Data) != "abc" {
		t.Fatalf("Data aliases the input: %q", x.Data)
	}

	in = Marshal(&SetDataRequest{Path: "/a", Data: []byte("abc")})
	r := NewAliasReader(in)
	x.Decode(r)
	in[len(in)-5] = 'X' // last byte of data, before the 4-byte version
	if string(x.Data) != "abX" {
		t.Fatalf("NewAliasReader copied: %q", x.Data)
	}
}

// OwnedBuffer never aliases the input, and keeps null apart from empty.
func TestOwnedBuffer(t *testing.T) {
	for _, alias := range []bool{false, true} {
		var w Writer
		w.Buffer([]byte("abc"))
		w.Buffer(nil)
		w.Buffer([]byte{})
		in := w.B
		r := NewReader(in)
		if alias {
			r = NewAliasReader(in)
		}
		data, null, empty := r.OwnedBuffer(), r.OwnedBuffer(), r.OwnedBuffer()
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		clear(in)
		if string(data) != "abc" || null != nil || empty == nil || len(empty) != 0 {
			t.Fatalf("alias=%v: OwnedBuffer gave %q, %#v, %#v; want \"abc\", nil and empty", alias, data, null, empty)
		}
	}
}
