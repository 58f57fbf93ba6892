package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
)

func TestEventLine(t *testing.T) {
	at := time.Date(2026, 11, 25, 18, 56, 3, 123e6, time.UTC)
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{Time: at, Session: Session(0x19344730001), User: "192.168.1.2,zkcli", IP: "192.168.1.2", Operation: OpCreate,
			Znode: "/a", ZnodeType: CreateMode(jute.FlagPersistent), Result: Success},
			"2026-11-25 18:56:03,123 INFO audit.Slf4jAuditLogger: session=0x19344730001\tuser=192.168.1.2,zkcli\tip=192.168.1.2\toperation=create\tznode=/a\tznode_type=persistent\tresult=success\n"},
		{Event{Time: at, Session: "0x1", User: "u", IP: "1.2.3.4", Operation: OpSetACL, Znode: "/a",
			ACL: ACLString([]jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}, {Perms: jute.PermRead | jute.PermAdmin, ID: jute.Id{Scheme: "sasl", ID: "bob"}}}), Result: Failure},
			"2026-11-25 18:56:03,123 ERROR audit.Slf4jAuditLogger: session=0x1\tuser=u\tip=1.2.3.4\toperation=setAcl\tznode=/a\tacl=world:anyone:cdrwa,sasl:bob:ra\tresult=failure\n"},
		{Event{Time: at, User: "root", Operation: OpServerStop, Result: Invoked},
			"2026-11-25 18:56:03,123 INFO audit.Slf4jAuditLogger: user=root\toperation=serverStop\tresult=invoked\n"},
	} {
		if got := tc.e.Line(); got != tc.want {
			t.Errorf("Line =\n%q\nwant\n%q", got, tc.want)
		}
	}
	ids := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "super"}, {Scheme: "digest", ID: "zkcli:hash="}, {Scheme: "sasl", ID: "bob"}}
	// Java iterates Collections.newSetFromMap(new ConcurrentHashMap<>())
	// of these Ids as digest, super, sasl, ip (checked with Apache's Id
	// class and OpenJDK 17).
	if got := acl.JavaSetOrder(ids); len(got) != 4 || got[0] != ids[2] || got[1] != ids[1] || got[2] != ids[3] || got[3] != ids[0] {
		t.Errorf("JavaSetOrder = %v", got)
	}
	if got := Users(ids); got != "zkcli,bob,127.0.0.1" {
		t.Errorf("Users = %q", got)
	}
}

func TestLoggerWritesAndRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(Config{Path: path, MaxSize: 1024, Backups: 2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 60 // about 100 bytes each: several rotations
	for i := range n {
		if !l.Log(Event{Time: time.Unix(0, 0), Operation: OpCreate, Znode: fmt.Sprintf("/node-%03d", i), Result: Success}) {
			t.Fatalf("record %d dropped", i)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, name := range []string{path + ".2", path + ".1", path} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 1024 {
			t.Errorf("%s has %d bytes, over the 1024 limit", name, len(data))
		}
		all = append(all, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("a third backup exists: %v", err)
	}
	// The newest records survive, in order, with none missing at the end.
	last := all[len(all)-1]
	if !strings.Contains(last, fmt.Sprintf("znode=/node-%03d", n-1)) {
		t.Errorf("last line %q", last)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1] >= all[i] {
			t.Errorf("out of order: %q then %q", all[i-1], all[i])
		}
	}
	if l.Log(Event{Operation: OpCreate}) || l.Dropped() != 1 {
		t.Errorf("a record after Close was accepted; dropped %d", l.Dropped())
	}
}

// A writer that cannot keep up drops records instead of blocking.
func TestLoggerDropsWhenFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(Config{Path: path, Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10000 {
			l.Log(Event{Operation: OpDelete, Result: Success})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Log blocked")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := uint64(strings.Count(string(data), "\n"))
	if written+l.Dropped() != 10000 {
		t.Errorf("written %d + dropped %d != 10000", written, l.Dropped())
	}
}
