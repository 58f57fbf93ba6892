package jute

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// hexBytes parses a golden vector written one field per line: hex digits,
// spaces allowed, then an optional "//" comment saying what they are.
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "//")
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("bad golden hex: %v", err)
	}
	return b
}

// newLike returns a new zero value of rec's concrete type.
func newLike(rec Record) Record {
	return reflect.New(reflect.TypeOf(rec).Elem()).Interface().(Record)
}

// testStat has a distinct value in every field, so that swapped fields show.
var testStat = Stat{
	Czxid: 0x100000001, Mzxid: 0x200000002, Ctime: 1700000000000, Mtime: 1700000000001,
	Version: 5, Cversion: 6, Aversion: 7, EphemeralOwner: 0x7fffffff00000001,
	DataLength: 9, NumChildren: 10, Pzxid: 0x300000003,
}

var (
	openACL = []ACL{{Perms: PermAll, ID: Id{Scheme: "world", ID: "anyone"}}}
	twoACLs = []ACL{
		{Perms: PermRead, ID: Id{Scheme: "digest", ID: "u:h="}},
		{Perms: PermAll, ID: Id{Scheme: "ip", ID: "10.0.0.1"}},
	}
	testPasswd = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)
