package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStdinStatus: in stdin mode the exit status is the last command's;
// blank lines and "quit" do not change it (zkCli.sh 3.8: "get /nope" then
// "quit" exits 1, "printwatches" exits 0).
func TestStdinStatus(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	for _, tc := range []struct {
		script string
		status int
	}{
		{"get /nope\nquit\nls /\n", 1},
		{"get /nope\n\n", 1},
		{"get /nope\nls /\n", 0},
		{"printwatches\n", 0},
		{"ls\n", 1},
		{"bogus\n", 127},
		{"", 0},
	} {
		if _, _, status := run(t, tc.script, "-server", addr); status != tc.status {
			t.Errorf("%q: exit status %d; want %d", tc.script, status, tc.status)
		}
	}
}

// TestHistoryRedo: history numbers commands from 0, lists the last eleven
// including itself, and shows a redone command in place of its "redo"
// (zkCli's ZooKeeperMain.processCmd).
func TestHistoryRedo(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	var script strings.Builder
	script.WriteString("create /h one\nget /h\nset /h two\nredo 1\n\n")
	for range 8 {
		script.WriteString("sync /\n")
	}
	script.WriteString("history\nredo 99\n")
	stdout, stderr, status := run(t, script.String(), "-server", addr)
	if status != exitError {
		t.Errorf("exit status %d; want %d (redo out of range)", status, exitError)
	}
	want := "one\ntwo\n" + strings.Repeat("Sync is OK\n", 8) +
		"2 - set /h two\n3 - get /h\n" +
		"4 - sync /\n5 - sync /\n6 - sync /\n7 - sync /\n8 - sync /\n9 - sync /\n10 - sync /\n11 - sync /\n" +
		"12 - history\n"
	if got := stdout[strings.Index(stdout, "one\n"):]; got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasSuffix(stderr, "Command index out of range\n") {
		t.Errorf("stderr %q; want the redo error", stderr)
	}
}

// TestPrintWatchesOff: with printwatches off, events are not printed.
func TestPrintWatchesOff(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	stdout, _, _ := run(t, "create /p\nprintwatches off\nget -w /p\nset /p x\nprintwatches\nprintwatches on\nget -w /p\nset /p y\n", "-server", addr)
	off := stdout[:strings.Index(stdout, "printwatches is off")]
	if strings.Contains(off[strings.Index(off, "null\n"):], "WATCHER") {
		t.Errorf("event printed with printwatches off:\n%s", stdout)
	}
	if !strings.HasSuffix(stdout, "x\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/p\n") {
		t.Errorf("event missing with printwatches on:\n%s", stdout)
	}
}

// TestCloseConnect: after close commands fail with "Not connected";
// connect opens a new session.
func TestCloseConnect(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	stdout, _, status := run(t, "close\nls /\nconnect "+addr+"\nls /\n", "-server", addr)
	want := "WatchedEvent state:Closed type:None path:null\nNot connected\n\nWATCHER::\n\n" +
		"WatchedEvent state:SyncConnected type:None path:null\n[zookeeper]\n"
	if !strings.HasSuffix(stdout, want) || status != 0 {
		t.Errorf("status %d, stdout:\n%s\nwant suffix:\n%s", status, stdout, want)
	}
}

// newShell is a shell connected to addr, for calling its methods.
func newShell(t *testing.T, addr string) *shell {
	t.Helper()
	var out bytes.Buffer
	s := &shell{out: &out, errw: &out, server: addr, timeout: 10 * time.Second, history: map[int]string{}}
	if err := s.connect(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.closeClient)
	return s
}

// TestComplete: tab completion of command names and node paths.
func TestComplete(t *testing.T) {
	t.Parallel()
	s := newShell(t, startZoo(t))
	for _, p := range []string{"/app", "/app/alpha", "/app/beta", "/apple"} {
		if s.execute([]string{"create", p}) != exitOK {
			t.Fatalf("create %s failed", p)
		}
	}
	for _, tc := range []struct {
		line    string
		pos     int
		want    string
		wantPos int
		ok      bool
	}{
		{"cre", 3, "create ", 7, true},
		{"get", 3, "", 0, false},  // get, getAcl, ... share only "get"
		{"getA", 4, "", 0, false}, // getAcl, getAllChildrenNumber
		{"getAl", 5, "getAllChildrenNumber ", 21, true},
		{"xyz", 3, "", 0, false},
		{"ls /ap", 6, "ls /app", 7, true}, // /app and /apple
		{"ls /app/a", 9, "ls /app/alpha", 13, true},
		{"ls /app/b x", 9, "ls /app/beta x", 12, true}, // cursor before the end
		{"ls /z", 5, "ls /zookeeper", 13, true},
		{"ls /nope/x", 10, "", 0, false},
		{"ls app", 6, "", 0, false}, // not a path
	} {
		got, pos, ok := s.complete(tc.line, tc.pos)
		if got != tc.want || pos != tc.wantPos || ok != tc.ok {
			t.Errorf("complete(%q, %d) = %q, %d, %v; want %q, %d, %v", tc.line, tc.pos, got, pos, ok, tc.want, tc.wantPos, tc.ok)
		}
	}
}

// TestPrompt is zkCli's prompt, with the command number.
func TestPrompt(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	s := newShell(t, addr)
	if got, want := s.prompt(), "[zk: "+addr+"(CONNECTED) 0] "; got != want {
		t.Errorf("prompt %q; want %q", got, want)
	}
	s.runLine("ls /")
	s.closeClient()
	if got, want := s.prompt(), "[zk: "+addr+"(CLOSED) 1] "; got != want {
		t.Errorf("prompt %q; want %q", got, want)
	}
}

// TestTokenize: zkCli's splitting, with quotes for arguments with spaces.
func TestTokenize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"ls /", []string{"ls", "/"}},
		{"  set  /a\t'x y' ", []string{"set", "/a", "x y"}},
		{`create /a "it's"`, []string{"create", "/a", "it's"}},
		{`create /a "open`, []string{"create", "/a", "open"}},
		{"", nil},
	} {
		if got := tokenize(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("tokenize(%q) = %q; want %q", tc.line, got, tc.want)
		}
	}
	args := []string{"create", "/a", "x y", `say "hi" now`, ""}
	if got := tokenize(strings.Join(quoteArgs(args), " ")); !slices.Equal(got, args) {
		t.Errorf("quoteArgs round trip: %q; want %q", got, args)
	}
}

// TestLimits: zkCli 3.8's zookeeper_limits text, as setquota writes it.
func TestLimits(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1",
		"count=-1,bytes=100=;byteHardLimit=70;countHardLimit=5",
	} {
		if got := parseLimits(text).String(); got != text {
			t.Errorf("parseLimits(%q).String() = %q", text, got)
		}
	}
	if got := parseLimits("count=3,bytes=7").String(); got != "count=3,bytes=7=;byteHardLimit=-1;countHardLimit=-1" {
		t.Errorf("old-style limits read as %q", got)
	}
}
