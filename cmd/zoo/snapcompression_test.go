package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// TestSnapCompression maps snapshot.compression.method as Apache names
// its methods, warning only about a method it does not know.
// Ref: Apache ZooKeeper administrator's guide, "snapshot.compression.method".
func TestSnapCompression(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   snap.Compression
		warn   bool
	}{
		{"", snap.CompressNone, false},
		{"gz", snap.CompressGzip, false},
		{"snappy", snap.CompressSnappy, false},
		{"lz4", snap.CompressNone, true},
	} {
		t.Run(tc.method, func(t *testing.T) {
			var logged bytes.Buffer
			got := snapCompression(slog.New(slog.NewTextHandler(&logged, nil)), tc.method)
			if got != tc.want {
				t.Errorf("%q: %d, want %d", tc.method, got, tc.want)
			}
			if warned := strings.Contains(logged.String(), "level=WARN"); warned != tc.warn {
				t.Errorf("%q: warned %v, want %v:\n%s", tc.method, warned, tc.warn, logged.String())
			}
		})
	}
}

// TestSnapDumpCompressed: "zoo snap dump" reads a snapshot whatever method
// compressed it.
func TestSnapDumpCompressed(t *testing.T) {
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	tr := tree.New()
	if _, err := tr.CreateNode("/dump", []byte("compressed"), acl, 0, -1, 1, 1000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []snap.Compression{snap.CompressGzip, snap.CompressSnappy} {
		dir := t.TempDir()
		name, err := snap.Write(vfs.Default, dir, snap.Meta{Index: 3, Term: 1, Zxid: 1}, txn.NewState(tr), snap.Options{Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := snapDump([]string{filepath.Join(dir, name)}, &out, &errOut); code != 0 {
			t.Fatalf("compression %d: exit %d: %s", c, code, errOut.String())
		}
		for _, want := range []string{"index = 3", "\n/dump\n", `data = "compressed"`} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("compression %d: dump does not mention %q:\n%s", c, want, out.String())
			}
		}
	}
}
