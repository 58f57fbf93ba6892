package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/zk"
)

// write is one acknowledged change of /k: its value and the zxid and time
// the server gave it.
type write struct {
	value      int
	zxid, time int64
}

// TestBackupUnderLoadAndPointInTimeRestore: a backup streamed from a
// running server's endpoint while it takes writes restores to its end, to
// a zxid in the middle and to a time, each matching the recorded history.
func TestBackupUnderLoadAndPointInTimeRestore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "zoo")
	addr, stop := startZooStop(t, dir, func(c *config.Config) { c.SnapCount = 40 })
	defer stop()
	c := connect(t, addr)
	defer c.Close()
	ctx := context.Background()
	if _, _, err := c.Create(ctx, "/k", []byte("0"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		history []write
	)
	set := func(from, to int) {
		for i := from; i <= to; i++ {
			st, err := c.Set(ctx, "/k", []byte(strconv.Itoa(i)), -1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			history = append(history, write{i, st.Mzxid, st.Mtime})
			mu.Unlock()
		}
	}
	set(1, 300)

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	epAddr, stopEP, err := backupEndpoint(slog.New(slog.DiscardHandler), "127.0.0.1:0", "s3cret", 4<<20,
		filepath.Join(dir, "log"), filepath.Join(dir, "snap"))
	if err != nil {
		t.Fatal(err)
	}
	defer stopEP()
	url := "http://" + epAddr
	resp, err := http.Get(url + backupPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("backup without the token: %s", resp.Status)
	}

	// The backup is taken while writes go on.
	done := make(chan struct{})
	go func() { defer close(done); set(301, 600) }()
	bk := filepath.Join(t.TempDir(), "backup.tgz")
	var errOut bytes.Buffer
	if err := runBackup([]string{"-url", url, "-token-file", token, bk}, &errOut, &errOut); err != nil {
		t.Fatalf("backup: %v %s", err, errOut.String())
	}
	<-done
	stop()

	valueAt := func(zxid int64) (int, bool) {
		v, ok := 0, false
		for _, w := range history {
			if w.zxid <= zxid {
				v, ok = w.value, true
			}
		}
		return v, ok
	}
	restore := func(args ...string) (string, int, int64) {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "restored")
		var out bytes.Buffer
		if err := runRestore(append(args, bk, dst), &out, &out); err != nil {
			t.Fatalf("restore %v: %v\n%s", args, err, out.String())
		}
		m := regexp.MustCompile(`snapshot at (\d+), .* up to zxid (\d+) \(the backup ends at (\d+)\)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("restore output: %s", out.String())
		}
		snapAt, _ := strconv.Atoi(m[1])
		upTo, _ := strconv.ParseInt(m[2], 10, 64)
		raddr := startZoo(t, dst)
		rc := connect(t, raddr)
		defer rc.Close()
		data, _, err := rc.Get(ctx, "/k")
		if err != nil {
			t.Fatal(err)
		}
		return string(data), snapAt, upTo
	}

	got, snapAt, end := restore()
	want, ok := valueAt(end)
	if !ok || got != strconv.Itoa(want) {
		t.Fatalf("full restore to %d: /k = %s, want %d", end, got, want)
	}
	t.Logf("backup: snapshot at %d, ends at %d (value %d; writes 301..600 ran during it)", snapAt, end, want)
	// A zxid in the middle, past the snapshot's fuzzy window.
	var mid write
	for _, w := range history {
		if w.zxid > int64(snapAt)+5 && w.zxid < end {
			mid = w
			if w.zxid > (int64(snapAt)+end)/2 {
				break
			}
		}
	}
	if mid.zxid == 0 {
		t.Fatalf("no write between the snapshot at %d and the end %d", snapAt, end)
	}
	got, _, upTo := restore("-to-zxid", fmt.Sprint(mid.zxid))
	if got != strconv.Itoa(mid.value) || upTo != mid.zxid {
		t.Fatalf("restore to zxid %d: /k = %s (up to %d), want %d", mid.zxid, got, upTo, mid.value)
	}
	// A time: every write at or before it, none after.
	want = 0
	for _, w := range history {
		if w.time <= mid.time && w.zxid <= end {
			want = w.value
		}
	}
	got, _, _ = restore("-to-time", fmt.Sprint(mid.time))
	if got != strconv.Itoa(want) {
		t.Fatalf("restore to time %d: /k = %s, want %d", mid.time, got, want)
	}
	// Before the snapshot: refused, not silently wrong.
	if err := runRestore([]string{"-to-zxid", fmt.Sprint(snapAt - 1), bk, filepath.Join(t.TempDir(), "x")}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("restore to a zxid before the backup's snapshot succeeded")
	}
}
