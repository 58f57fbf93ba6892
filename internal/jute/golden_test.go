package jute

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"
)

// goldenValues are the values that testdata/apache/ApacheGolden.java
// serializes with Apache ZooKeeper's own classes (3.8.0, Debian); the bytes
// it wrote are in testdata/apache_golden.txt.
func goldenValues() map[string]Record {
	passwd := testPasswd
	return map[string]Record{
		"ConnectRequest":    &ConnectRequest{LastZxidSeen: 0x500000007, TimeOut: 30000, SessionID: 0x1234567890abcdef, Passwd: passwd},
		"ConnectRequestRO":  &ConnectRequest{LastZxidSeen: 0x500000007, TimeOut: 30000, SessionID: 0x1234567890abcdef, Passwd: passwd, ReadOnly: true, HasReadOnly: true},
		"ConnectResponse":   &ConnectResponse{TimeOut: 10000, SessionID: 0x1234567890abcdef, Passwd: passwd},
		"ConnectResponseRO": &ConnectResponse{TimeOut: 10000, SessionID: 0x1234567890abcdef, Passwd: passwd, HasReadOnly: true},

		"RequestHeader": &RequestHeader{Xid: 7, Type: OpGetData},
		"ReplyHeader":   &ReplyHeader{Xid: -1, Zxid: 0x100000002, Err: NoNode},
		"MultiHeader":   &MultiHeader{Type: -1, Done: true, Err: -1},
		"AuthPacket":    &AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("user:pass")},
		"SetWatches":    &SetWatches{RelativeZxid: 0x42, DataWatches: []string{"/a", "/b"}, ExistWatches: []string{}, ChildWatches: []string{"/c"}},
		"SetWatches2": &SetWatches2{RelativeZxid: 0x43, DataWatches: []string{"/d"}, ExistWatches: []string{"/e", "/f"},
			ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r", "/s"}},

		"GetDataRequest":        &PathWatch{Path: "/zoo/a", Watch: true},
		"ExistsRequest":         &PathWatch{Path: "/zoo"},
		"GetACLRequest":         &PathRequest{Path: "/zoo"},
		"CreateRequest":         &CreateRequest{Path: "/zoo/n-", Data: []byte("hello"), ACL: twoACLs, Flags: FlagEphemeralSequential},
		"CreateRequestNullData": &CreateRequest{Path: "/x", ACL: openACL},
		"CreateTTLRequest":      &CreateTTLRequest{Path: "/ttl", Data: []byte("t"), ACL: openACL, Flags: FlagPersistentWithTTL, TTL: 60000},
		"DeleteRequest":         &PathVersion{Path: "/zoo/a", Version: -1},
		"SetDataRequest":        &SetDataRequest{Path: "/zoo/a", Data: []byte("new"), Version: 3},
		"SetACLRequest":         &SetACLRequest{Path: "/zoo/a", ACL: openACL, Version: 2},
		"ReconfigRequest":       &ReconfigRequest{LeavingServers: "3", CurConfigID: -1},
		"AddWatchRequest":       &AddWatchRequest{Path: "/w", Mode: AddWatchPersistentRecursive},
		"RemoveWatchesRequest":  &WatchTypeRequest{Path: "/w", Type: WatcherAny},
		"GetSASLRequest":        &SASLRequest{Token: []byte("tok")},

		"Multi": &MultiRequest{Ops: []MultiOp{
			{OpCreate, &CreateRequest{Path: "/m", Data: []byte("x"), ACL: openACL, Flags: FlagPersistent}},
			{OpDelete, &PathVersion{Path: "/m/old", Version: 4}},
			{OpCheck, &PathVersion{Path: "/m", Version: 1}},
		}},
		"MultiContainerTTL": &MultiRequest{Ops: []MultiOp{
			{OpCreateContainer, &CreateRequest{Path: "/c", ACL: openACL, Flags: FlagContainer}},
			{OpCreateTTL, &CreateTTLRequest{Path: "/t", Data: []byte("y"), ACL: openACL, Flags: FlagPersistentWithTTL, TTL: 1000}},
			{OpSetData, &SetDataRequest{Path: "/m", Data: []byte("z"), Version: -1}},
		}},
		"MultiRead": &MultiRequest{Ops: []MultiOp{
			{OpGetData, &PathWatch{Path: "/a"}},
			{OpGetChildren, &PathWatch{Path: "/b"}},
		}},
		"MultiEmpty": &MultiRequest{},

		"CreateResponse":               &CreateResponse{Path: "/zoo/n-0000000001"},
		"Create2Response":              &Create2Response{Path: "/zoo/n-0000000001", Stat: testStat},
		"SetDataResponse":              &StatResponse{Stat: testStat},
		"GetDataResponse":              &GetDataResponse{Data: []byte("hello"), Stat: testStat},
		"GetDataResponseNull":          &GetDataResponse{Stat: testStat},
		"GetChildrenResponse":          &GetChildrenResponse{Children: []string{"a", "bb"}},
		"GetChildren2Response":         &GetChildren2Response{Children: []string{}, Stat: testStat},
		"GetACLResponse":               &GetACLResponse{ACL: twoACLs, Stat: testStat},
		"GetAllChildrenNumberResponse": &CountResponse{TotalNumber: 12},
		"GetEphemeralsResponse":        &StringsResponse{Strings: []string{"/e1", "/e2"}},
		"WhoAmIResponse":               &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "u"}}},
		"ErrorResponse":                &ErrorResponse{Err: NodeExists},
		"WatcherEvent":                 &WatcherEvent{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/zoo/a"},
		"SyncResponse":                 &PathRequest{Path: "/zoo"},
		"SetSASLResponse":              &SASLResponse{},

		"MultiResponse": &MultiResponse{Results: []MultiResult{
			{Op: OpCreate, Record: &CreateResponse{Path: "/m"}},
			{Op: OpCreate2, Record: &Create2Response{Path: "/m2", Stat: testStat}},
			{Op: OpDelete},
			{Op: OpSetData, Record: &StatResponse{Stat: testStat}},
			{Op: OpCheck},
		}},
		"MultiResponseFailed": &MultiResponse{Results: []MultiResult{
			{Op: OpError, Err: OK},
			{Op: OpError, Err: NoNode},
			{Op: OpError, Err: RuntimeInconsistency},
		}},
		"MultiResponseRead": &MultiResponse{Results: []MultiResult{
			{Op: OpGetData, Record: &GetDataResponse{Data: []byte("d"), Stat: testStat}},
			{Op: OpGetChildren, Record: &GetChildrenResponse{Children: []string{"x"}}},
			{Op: OpError, Err: NoNode},
		}},
		"MultiResponseEmpty": &MultiResponse{},
	}
}

func readGolden(t testing.TB) map[string][]byte {
	t.Helper()
	f, err := os.Open("testdata/apache_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, hx, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		b, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Our encoding of each value is byte for byte what Apache's classes write,
// and decoding Apache's bytes gives the value back.
func TestApacheGolden(t *testing.T) {
	golden := readGolden(t)
	values := goldenValues()
	for name := range golden {
		if values[name] == nil {
			t.Errorf("%s: in apache_golden.txt but not in goldenValues", name)
		}
	}
	for name, want := range values {
		t.Run(name, func(t *testing.T) {
			apache, ok := golden[name]
			if !ok {
				t.Fatalf("no line for %s in apache_golden.txt", name)
			}
			if got := Marshal(want); !bytes.Equal(got, apache) {
				t.Fatalf("encode differs from Apache:\n got %x\nwant %x", got, apache)
			}
			got := newLike(want)
			if err := Unmarshal(apache, got); err != nil {
				t.Fatalf("decode Apache's bytes: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decode Apache's bytes:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
