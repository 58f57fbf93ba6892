package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/server"
)

// fakeClock is a settable clock for the rate limiter.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func snapshotRequest(t *testing.T, url, authz string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// The snapshot command streams an Apache snapshot of the tree that
// internal/apache reads back, with Apache's last_zxid and snapshot_size
// headers; it is rate limited (429) until the interval has passed;
// streaming=false answers JSON with the same headers.
func TestSnapshotCommand(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	tmp := t.TempDir()
	url, addr, _ := startZoo(t, func(c *Config, srv *server.Server) {
		c.Auth = &Auth{SuperDigest: acl.Digest("super:test"), RootACL: srv.RootACL}
		c.Snapshot = SnapshotHandler(SnapshotConfig{Write: srv.WriteApacheSnapshot, TempDir: tmp, Interval: time.Minute, Now: clock.Now})
	})
	s := dialSession(t, addr)
	s.create(t, "/app", "config")
	s.create(t, "/app/leaf", "leaf data")

	resp, body := snapshotRequest(t, url+"/snapshot", "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no auth: %s %s", resp.Status, body)
	}
	resp, body = snapshotRequest(t, url+"/snapshot", "digest super:test")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("snapshot: %s %s %.200q", resp.Status, resp.Header, body)
	}
	if size := resp.Header.Get("snapshot_size"); size != strconv.Itoa(len(body)) {
		t.Errorf("snapshot_size %q, body %d bytes", size, len(body))
	}
	zxid, err := strconv.ParseInt(strings.TrimPrefix(resp.Header.Get("last_zxid"), "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(resp.Header.Get("last_zxid"), "0x") || zxid <= 0 {
		t.Errorf("last_zxid %q: %v", resp.Header.Get("last_zxid"), err)
	}
	nodes := map[string]string{}
	snap, err := apache.ReadSnapshot(bytes.NewReader(body), "stream", apache.Plain, apache.Options{}, func(n *apache.Node) error {
		nodes[n.Path] = string(n.Data)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the streamed snapshot: %v", err)
	}
	if nodes["/app"] != "config" || nodes["/app/leaf"] != "leaf data" {
		t.Errorf("streamed tree: %v", nodes)
	}
	if snap.Digest != nil && snap.Digest.Zxid != zxid {
		t.Errorf("digest zxid %#x, last_zxid %#x", snap.Digest.Zxid, zxid)
	}

	resp, body = snapshotRequest(t, url+"/snap", "digest super:test")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second snapshot within the interval: %s %s", resp.Status, body)
	}
	clock.advance(time.Minute)
	resp, body = snapshotRequest(t, url+"/snapshot?streaming=false", "digest super:test")
	var got map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got["command"] != "snapshot" ||
		resp.Header.Get("last_zxid") == "" || resp.Header.Get("snapshot_size") == "" {
		t.Errorf("streaming=false: %s %s %s", resp.Status, resp.Header, body)
	}
}

// A snapshot that fails to write answers 500 and leaves no temporary file.
func TestSnapshotCommandFails(t *testing.T) {
	tmp := t.TempDir()
	h := SnapshotHandler(SnapshotConfig{TempDir: tmp, Write: func(w io.Writer) (int64, error) {
		_, _ = w.Write([]byte("partial"))
		return 0, errors.New("disk on fire")
	}})
	resp, body := serveOnce(t, h)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, `"command": "snapshot"`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if left, _ := filepathGlob(tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func serveOnce(t *testing.T, h http.Handler) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/commands/snapshot", nil))
	return rec.Result(), rec.Body.String()
}

func filepathGlob(dir string) ([]string, error) { return filepath.Glob(filepath.Join(dir, "*")) }
