package server

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/audit"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/zktest"
)

func TestAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zookeeper_audit.log")
	al, err := audit.Open(audit.Config{Path: path, ServerUser: "root"})
	if err != nil {
		t.Fatal(err)
	}
	z := startServer(t, func(c *Config) { c.Audit = al })
	sid := auditedOps(t, z.addr)

	z.shutdown(ioTimeout)
	if err := al.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	who := "session=" + sid + "\tuser=zkcli,127.0.0.1\tip=127.0.0.1\t"
	want := []string{
		"INFO audit.Slf4jAuditLogger: " + who + "operation=create\tznode=/a\tznode_type=persistent\tresult=success",
		"ERROR audit.Slf4jAuditLogger: " + who + "operation=create\tznode=/a\tznode_type=persistent\tresult=failure",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=setData\tznode=/a\tresult=success",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=setAcl\tznode=/a\tacl=world:anyone:cdrwa\tresult=success",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=create\tznode=/s-0000000001\tznode_type=persistent_sequential\tresult=success",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=create\tznode=/b\tznode_type=persistent\tresult=success",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=delete\tznode=/b\tresult=success",
		"ERROR audit.Slf4jAuditLogger: " + who + "operation=multiOperation\tresult=failure",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=delete\tznode=/a\tresult=success",
		"INFO audit.Slf4jAuditLogger: " + who + "operation=create\tznode=/e\tznode_type=ephemeral\tresult=success",
		"INFO audit.Slf4jAuditLogger: session=" + sid + "\tuser=root\toperation=ephemeralZNodeDeletionOnSessionCloseOrExpire\tznode=/e\tresult=success",
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} `)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), data)
	}
	for i, l := range lines {
		if !stamp.MatchString(l) || stamp.ReplaceAllString(l, "") != want[i] {
			t.Errorf("line %d:\n%q\nwant\n%q", i+1, l, want[i])
		}
	}
}

// auditedOps runs the requests TestAuditLog audits, as digest user zkcli,
// and returns the session id as the audit log prints it.
func auditedOps(t *testing.T, addr string) string {
	c := newSession(t, addr)
	c.mustCall(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("zkcli:pw")}, nil, jute.OK)
	c.create("/a", nil, jute.FlagPersistent)
	c.mustCall(jute.OpCreate, createReq("/a", nil, jute.FlagPersistent), nil, jute.NodeExists)
	c.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("x"), Version: -1}, nil, jute.OK)
	c.mustCall(jute.OpSetACL, &jute.SetACLRequest{Path: "/a", Version: -1, ACL: []jute.ACL{
		{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}}, nil, jute.OK)
	c.mustCall(jute.OpCreate, createReq("/s-", nil, jute.FlagPersistentSequential), nil, jute.OK)
	c.mustCall(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Op: jute.OpCreate, Record: createReq("/b", nil, jute.FlagPersistent)},
		{Op: jute.OpCheck, Record: &jute.PathVersion{Path: "/b", Version: -1}},
		{Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/b", Version: -1}},
	}}, nil, jute.OK)
	c.mustCall(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/nope", Version: -1}},
	}}, nil, jute.OK)
	c.mustCall(jute.OpDelete, &jute.PathVersion{Path: "/a", Version: -1}, nil, jute.OK)
	c.mustCall(jute.OpGetData, &jute.PathWatch{Path: "/"}, nil, jute.OK) // not audited
	c.create("/e", nil, jute.FlagEphemeral)
	c.mustCall(jute.OpCloseSession, nil, nil, jute.OK)
	c.expectClosedSilently()
	return audit.Session(c.sid)
}

// TestAuditLogMatchesApache runs the same requests against Apache 3.8 with
// audit.enable=true and compares its audit messages (slf4j-simple prints
// them to its log as "... Slf4jAuditLogger - MESSAGE") with Zoo's.
func TestAuditLogMatchesApache(t *testing.T) {
	a, err := zktest.Apache{Extra: []string{"audit.enable=true"}}.Start(t.TempDir())
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	asid := auditedOps(t, a.Addr)

	path := filepath.Join(t.TempDir(), "audit.log")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// Apache's own records name the user it runs as (user.name).
	al, err := audit.Open(audit.Config{Path: path, ServerUser: me.Username})
	if err != nil {
		t.Fatal(err)
	}
	z := startServer(t, func(c *Config) { c.Audit = al })
	zsid := auditedOps(t, z.addr)
	z.shutdown(ioTimeout)
	if err := al.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var zoo []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		_, msg, _ := strings.Cut(l, "audit.Slf4jAuditLogger: ")
		zoo = append(zoo, strings.ReplaceAll(msg, zsid, "SID"))
	}
	// Apache logs asynchronously to the request; wait for the last record.
	var apache []string
	waitFor(t, ioTimeout, func() error {
		apache = apache[:0]
		logData, err := os.ReadFile(a.LogPath)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(logData), "\n") {
			if _, msg, ok := strings.Cut(l, "Slf4jAuditLogger - "); ok && strings.Contains(msg, asid) {
				apache = append(apache, strings.ReplaceAll(msg, asid, "SID"))
			}
		}
		if len(apache) < len(zoo) {
			return fmt.Errorf("%d Apache audit records, want %d", len(apache), len(zoo))
		}
		return nil
	})
	if !slices.Equal(apache, zoo) {
		t.Errorf("audit records differ\nApache:\n%s\nZoo:\n%s", strings.Join(apache, "\n"), strings.Join(zoo, "\n"))
	}
}
