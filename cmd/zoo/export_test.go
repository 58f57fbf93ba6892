package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/zktest"
)

// TestExportToApache: a tree built on Zoo, exported, is served by Apache
// 3.8 started on the export, Stat for Stat, and Apache finds the digest
// the export stored to match its tree.
func TestExportToApache(t *testing.T) {
	for _, comp := range []string{"", "gz", "snappy"} {
		t.Run("compression="+comp, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "zoo")
			addr, stop := startZooStop(t, src)
			defer stop()
			c := connect(t, addr)
			fill(t, c, 500)
			want := walk(t, c)
			c.Close()
			stop()

			dst := filepath.Join(t.TempDir(), "apache")
			var out bytes.Buffer
			args := []string{src, dst}
			if comp != "" {
				args = append([]string{"-compression", comp}, args...)
			}
			if err := runExport(args, &out, &out); err != nil {
				t.Fatalf("export: %v\n%s", err, out.String())
			}
			t.Log(out.String())
			ap := startApache(t, zktest.Apache{ExtendedTypes: true, DataDir: dst})
			ac := connect(t, ap.Addr)
			defer ac.Close()
			if err := ac.AddAuth(context.Background(), "digest", []byte("alice:secret")); err != nil {
				t.Fatal(err)
			}
			compareTrees(t, walk(t, ac), want)
			log, err := os.ReadFile(ap.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), "digest") || strings.Contains(string(log), "Digests are not matching") {
				t.Errorf("Apache's log on the digest:\n%s", grepLines(string(log), "igest"))
			}
		})
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
