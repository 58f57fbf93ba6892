package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// TestSnapDumpReadsApacheSnapshots: `zoo snap dump` prints an Apache
// snapshot (plain, gz, snappy) instead of calling it damaged.
func TestSnapDumpReadsApacheSnapshots(t *testing.T) {
	st := txn.NewState(tree.New())
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	if _, err := st.Tree.CreateNode("/from-apache", []byte("hello"), open, 0, -1, 0x100000007, 1); err != nil {
		t.Fatal(err)
	}
	st.Sessions[0x100000abc] = txn.SessionInfo{TimeoutMs: 4000}
	for _, c := range []apache.Compression{apache.Plain, apache.Gzip, apache.Snappy} {
		var b bytes.Buffer
		if err := apache.WriteSnapshot(&b, st, 0x100000007, c); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), apache.SnapshotName(0x100000007, c))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(runSnap, path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", path, code, errOut)
		}
		mustContain(t, "snap dump of "+path, out, "/from-apache", "hello", "0x100000abc", "0x100000007")
	}
}
