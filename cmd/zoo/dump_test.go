package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
	"github.com/zoohq/zoo/zk"
)

// durableData runs a durable server in a temp dir that snapshots every 5
// txns, writes a few nodes through the client (text, binary and nil data,
// an ephemeral, a sequential, a setData and a delete) and stops it. It
// returns the data dir.
func durableData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := server.New(server.Config{
		Logger: slog.New(slog.DiscardHandler), TickTime: 200 * time.Millisecond,
		DataDir: dir, SnapCount: 5, Version: "3.9.2-zoo",
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serveOn(t, srv, "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	acl := zk.OpenACLUnsafe()
	var setZxid int64
	steps := []func() error{
		func() error {
			_, _, err := c.Create(ctx, "/dump", []byte("hello world"), zk.Persistent, acl)
			return err
		},
		func() error {
			_, _, err := c.Create(ctx, "/dump/bin", []byte{0, 1, 2, 0xff}, zk.Persistent, acl)
			return err
		},
		func() error { _, _, err := c.Create(ctx, "/dump/nil", nil, zk.Persistent, acl); return err },
		func() error { _, _, err := c.Create(ctx, "/dump/eph", []byte("e"), zk.Ephemeral, acl); return err },
		func() error { _, _, err := c.Create(ctx, "/dump/seq-", nil, zk.PersistentSequential, acl); return err },
		func() error {
			st, err := c.Set(ctx, "/dump", []byte("set again"), -1)
			setZxid = st.Mzxid
			return err
		},
	}
	for i := range 8 {
		steps = append(steps, func() error {
			_, _, err := c.Create(ctx, fmt.Sprintf("/dump/n%d", i), []byte("x"), zk.Persistent, acl)
			return err
		})
	}
	steps = append(steps, func() error { return c.Delete(ctx, "/dump/n0", -1) })
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// Snapshots are written in the background: wait for one that holds
	// the setData, which the dumps look for, rather than stop before it
	// is written (a loaded machine did once).
	for snapIndex(t, dir) < setZxid {
		if ctx.Err() != nil {
			t.Fatalf("no snapshot at or after the setData's zxid %#x; newest %#x", setZxid, snapIndex(t, dir))
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
	stop()
	return dir
}

// snapIndex returns the index of the newest snapshot under dataDir, 0 if
// there is none.
func snapIndex(t *testing.T, dataDir string) int64 {
	t.Helper()
	names := snapNames(t, dataDir)
	if len(names) == 0 {
		return 0
	}
	var idx int64
	if _, err := fmt.Sscanf(names[len(names)-1], "snap.%x", &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// newestSnap returns the path of the newest snapshot under dataDir.
func newestSnap(t *testing.T, dataDir string) string {
	t.Helper()
	names := snapNames(t, dataDir)
	if len(names) == 0 {
		t.Fatal("no snapshot written with SnapCount 5")
	}
	return filepath.Join(dataDir, "snap", names[len(names)-1])
}

// snapNames lists the snapshot files under dataDir, oldest first.
func snapNames(t *testing.T, dataDir string) []string {
	t.Helper()
	var names []string
	ents, err := os.ReadDir(filepath.Join(dataDir, "snap"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "snap.") && !strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}

func run(f func([]string, *bytes.Buffer, *bytes.Buffer) int, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := f(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func runSnap(args []string, o, e *bytes.Buffer) int { return snapDump(args, o, e) }
func runLog(args []string, o, e *bytes.Buffer) int  { return logDump(args, o, e) }

func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not mention %q:\n%s", what, w, out)
		}
	}
}

func TestDumps(t *testing.T) {
	dir := durableData(t)
	file := newestSnap(t, dir)
	logDir := filepath.Join(dir, "log")

	code, out, errOut := run(runSnap, file)
	if code != 0 {
		t.Fatalf("snap dump: exit %d: %s", code, errOut)
	}
	mustContain(t, "snap dump", out, "index = ", "zxid = 0x", "\n/dump\n", "/dump/bin\n", "/zookeeper\n",
		`data = "set again"`, "data = hex:000102ff", "data = null", "world:anyone:cdrwa", "Sessions (")

	code, out, errOut = run(runSnap, "--json", file)
	if code != 0 {
		t.Fatalf("snap dump --json: exit %d: %s", code, errOut)
	}
	var doc snapDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("snap dump --json: %v\n%s", err, out)
	}
	byPath := map[string]nodeDoc{}
	for _, n := range doc.Nodes {
		byPath[n.Path] = n
	}
	if n, ok := byPath["/dump/bin"]; !ok || n.Data == nil || *n.Data != "AAEC/w==" || n.Encoding != "base64" || n.DataLength != 4 {
		t.Errorf("/dump/bin in JSON: %+v (found %v)", n, ok)
	}
	if n, ok := byPath["/dump/nil"]; !ok || n.Data != nil {
		t.Errorf("/dump/nil in JSON: %+v (found %v); want null data", n, ok)
	}
	if len(doc.ACLs) == 0 || doc.Index == 0 {
		t.Errorf("JSON header/ACLs: index %d, %d ACL lists", doc.Index, len(doc.ACLs))
	}

	code, out, errOut = run(runLog, logDir)
	if code != 0 {
		t.Fatalf("log dump: exit %d: %s", code, errOut)
	}
	mustContain(t, "log dump", out, "snapshot-marker", "hard-state", "entry index=",
		"createSession session=0x", "create2 session=", "path=/dump/n7", "setData session=", "delete session=",
		"path=/dump/n0", "closeSession")

	code, out, errOut = run(runLog, "--json", logDir)
	if code != 0 {
		t.Fatalf("log dump --json: exit %d: %s", code, errOut)
	}
	var ld logDoc
	if err := json.Unmarshal([]byte(out), &ld); err != nil {
		t.Fatalf("log dump --json: %v\n%s", err, out)
	}
	ops := map[string]bool{}
	for _, r := range ld.Records {
		if r.Txn != nil {
			ops[r.Txn.Op] = true
		}
	}
	for _, op := range []string{"createSession", "create2", "setData", "delete", "closeSession"} {
		if !ops[op] {
			t.Errorf("log dump --json has no %s txn; ops %v", op, ops)
		}
	}
}

// lastRecordEnd returns the segment holding the log's last record and the
// offset just past that record.
func lastRecordEnd(t *testing.T, logDir string) (string, int64, int64) {
	t.Helper()
	var last wal.Record
	var firstEntry int64 = -1
	err := wal.Scan(vfs.Default, logDir, func(r wal.Record) error {
		last = r
		if r.Entry != nil && firstEntry < 0 {
			firstEntry = r.Offset
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return last.File, last.Offset + last.Size, firstEntry
}

func TestLogDumpReportsDamage(t *testing.T) {
	tests := []struct {
		name string
		// at returns where to write garbage and where the damage is reported.
		at   func(end, firstEntry int64) (int64, int64)
		want string
	}{
		{"torn tail", func(end, _ int64) (int64, int64) { return end, end }, "torn tail"},
		{"corruption", func(_, first int64) (int64, int64) { return first + 1, first }, "corrupt log"},
	}
	dir := durableData(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logDir := t.TempDir()
			ents, err := os.ReadDir(filepath.Join(dir, "log"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(dir, "log", e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(logDir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			seg, end, first := lastRecordEnd(t, logDir)
			at, off := tc.at(end, first)
			f, err := os.OpenFile(seg, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef, 1}, at); err != nil {
				t.Fatal(err)
			}
			f.Close()
			for _, args := range [][]string{{logDir}, {"--json", logDir}} {
				code, out, errOut := run(runLog, args...)
				if code != 1 {
					t.Fatalf("log dump %v: exit %d; want 1", args, code)
				}
				mustContain(t, "stderr", errOut, tc.want, seg, fmt.Sprintf("offset %d", off))
				if args[0] == "--json" {
					var ld logDoc
					if err := json.Unmarshal([]byte(out), &ld); err != nil || ld.Error == nil || ld.Error.Offset != off {
						t.Fatalf("log dump --json: %v, error %+v", err, ld.Error)
					}
				}
			}
		})
	}
}

func TestDumpUsage(t *testing.T) {
	for _, f := range []func([]string, *bytes.Buffer, *bytes.Buffer) int{runSnap, runLog} {
		if code, _, errOut := run(f); code != 2 || !strings.Contains(errOut, "usage") {
			t.Errorf("no argument: exit %d, %q; want 2 and a usage line", code, errOut)
		}
	}
	for _, args := range [][]string{nil, {"list"}} {
		var out, errOut bytes.Buffer
		if code := runDump("snap", args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "snap dump") {
			t.Errorf("zoo snap %v: exit %d, %q; want 2 and the usage", args, code, errOut.String())
		}
	}
	if code, _, _ := run(runSnap, filepath.Join(t.TempDir(), "missing")); code != 1 {
		t.Errorf("snap dump of a missing file: exit %d; want 1", code)
	}
}
