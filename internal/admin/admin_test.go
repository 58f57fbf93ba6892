package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/zk"
)

// startZoo starts a Zoo server on a free port, with its data in a temp
// dir, and an AdminServer for it; both stop when the test ends.
func startZoo(t *testing.T, opts ...func(*Config, *server.Server)) (adminURL, clientAddr string, srv *server.Server) {
	t.Helper()
	srv, err := server.New(server.Config{FourLetterWords: []string{"*"}, Version: "3.9.2-zoo", DataDir: t.TempDir(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Source: srv.Source(), Metrics: srv.Metrics(), InitialConfig: "tickTime=2000\n",
		SetTraceMask: srv.SetTraceMask, LastSnapshot: srv.LastSnapshot,
	}
	for _, o := range opts {
		o(&cfg, srv)
	}
	as := Start(aln, Handler(cfg), time.Second)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := as.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		<-served
	})
	url := "http://" + aln.Addr().String() + "/commands"
	deadline := time.Now().Add(10 * time.Second)
	for !srv.Source().Serving() {
		if time.Now().After(deadline) {
			t.Fatal("server not serving")
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	return url, ln.Addr().String(), srv
}

func get(t *testing.T, method, url string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if resp.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, b)
		}
	}
	return resp.StatusCode, m
}

// apacheKeys returns the top-level keys of Apache 3.8's answer to cmd
// (testdata/apache, captured from Debian's Apache 3.8.0 AdminServer).
func apacheKeys(t *testing.T, cmd string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "apache", cmd+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every command answers under its name and each alias, with Apache's
// keys (those of Apache's answer on a standalone server, captured in
// testdata; Zoo may add some), "command" set to the primary name and a
// null error.
func TestCommandsMatchApache(t *testing.T) {
	url, _, _ := startZoo(t)
	for _, c := range commands() {
		if c.protected {
			continue
		}
		for _, name := range c.names {
			t.Run(name, func(t *testing.T) {
				status, got := get(t, "GET", url+"/"+name, nil)
				if status != http.StatusOK {
					t.Fatalf("status %d", status)
				}
				if got["command"] != c.names[0] {
					t.Errorf("command %v, want %s", got["command"], c.names[0])
				}
				want := apacheKeys(t, c.names[0])
				if want["error"] == nil && got["error"] != nil {
					t.Errorf("error %v", got["error"])
				}
				for k := range want {
					if c.names[0] == "monitor" || c.names[0] == "system_properties" {
						// monitor: see TestMonitor and the server's
						// TestMntrApacheKeys; system_properties are the
						// JVM's, and Zoo names its Go runtime instead.
						break
					}
					if _, ok := got[k]; !ok && !notInZoo[c.names[0]+"."+k] {
						t.Errorf("key %q missing; Apache answers %v", k, want[k])
					}
				}
			})
		}
	}
}

// notInZoo are keys of Apache's answers that are JVM-only (environment and
// system properties name the Go runtime instead).
var notInZoo = map[string]bool{}

func init() {
	for _, k := range []string{"java.version", "java.vendor", "java.home", "java.class.path", "java.library.path",
		"java.io.tmpdir", "java.compiler", "os.version"} {
		notInZoo["environment."+k] = true
	}
}

// The monitor command carries mntr's values as JSON numbers and strings.
func TestMonitor(t *testing.T) {
	url, _, _ := startZoo(t)
	_, got := get(t, "GET", url+"/monitor", nil)
	if got["server_state"] != "standalone" || !strings.HasPrefix(got["version"].(string), "3.9.2-zoo") {
		t.Fatalf("monitor %v", got)
	}
	for _, k := range []string{"znode_count", "watch_count", "avg_latency", "cnt_readlatency", "p99_updatelatency", "uptime"} {
		if _, ok := got[k].(float64); !ok {
			t.Errorf("%s = %#v, want a number", k, got[k])
		}
	}
}

// snapshot and restore need an authorized user; an AdminServer with no
// Config.Auth accepts none: refused with Apache's 401 (no credentials) or
// 403 (credentials), never run.
func TestProtectedCommandsRefused(t *testing.T) {
	url, _, _ := startZoo(t)
	for _, tc := range []struct {
		method, name string
	}{{"GET", "snapshot"}, {"GET", "snap"}, {"POST", "restore"}, {"POST", "rest"}} {
		status, got := get(t, tc.method, url+"/"+tc.name, nil)
		if status != http.StatusUnauthorized || got["error"] != "Auth info is missing for the command" {
			t.Errorf("%s without auth: %d %v", tc.name, status, got)
		}
		status, got = get(t, tc.method, url+"/"+tc.name, map[string]string{"Authorization": "digest root:root_passwd"})
		if status != http.StatusForbidden || got["error"] != "Not authorized" {
			t.Errorf("%s with auth: %d %v", tc.name, status, got)
		}
	}
}

// An unknown command is answered 200 with Apache's error; the command list
// links every command; set_trace_mask sets what get_trace_mask reads.
func TestUnknownListAndTraceMask(t *testing.T) {
	url, _, _ := startZoo(t)
	status, got := get(t, "GET", url+"/nosuch", nil)
	if status != http.StatusOK || got["error"] != "Unknown command: nosuch" || got["command"] != "nosuch" {
		t.Errorf("unknown: %d %v", status, got)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, c := range commands() {
		if !strings.Contains(string(b), `<a href="/commands/`+c.names[0]+`">`) {
			t.Errorf("list lacks %s", c.names[0])
		}
	}
	if _, got := get(t, "GET", url+"/set_trace_mask", nil); got["error"] != "setTraceMask requires long traceMask argument" {
		t.Errorf("stmk without argument: %v", got)
	}
	if _, got := get(t, "GET", url+"/stmk?traceMask=99", nil); got["tracemask"] != 99.0 {
		t.Errorf("stmk: %v", got)
	}
	if _, got := get(t, "GET", url+"/gtmk", nil); got["tracemask"] != 99.0 {
		t.Errorf("gtmk after stmk: %v", got)
	}
	if status, _ := get(t, "POST", url+"/ruok", nil); status != http.StatusMethodNotAllowed {
		t.Errorf("POST ruok: %d", status)
	}
}

// session is a client of the test server.
type session struct{ c *zk.Client }

func dialSession(t *testing.T, addr string) session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return session{c}
}

func (s session) create(t *testing.T, path, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := s.c.Create(ctx, path, []byte(data), 0, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
}

func (s session) get(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := s.c.Get(ctx, path); err != nil {
		t.Fatal(err)
	}
}
