package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Normalising what differs from run to run: times, session ids (as
// ephemeral owners), the server's address, and zxids (Zoo does not
// number its transactions exactly as Apache does).
var (
	dateRE  = regexp.MustCompile(`[A-Z][a-z]{2} [A-Z][a-z]{2} [0-9]{2} [0-9:]{8} [A-Z]+ [0-9]{4}`)
	ownerRE = regexp.MustCompile(`ephemeralOwner = 0x[0-9a-f]+`)
	addrRE  = regexp.MustCompile(`(?m)^Connecting to .*$`)
	zxidRE  = regexp.MustCompile(`(?m)^([cmp]Zxid) = 0x[0-9a-f]+$`)
)

func normalise(s string) string {
	s = dateRE.ReplaceAllString(s, "DATE")
	s = ownerRE.ReplaceAllString(s, "ephemeralOwner = OWNER")
	s = zxidRE.ReplaceAllString(s, "$1 = ZXID")
	return addrRE.ReplaceAllString(s, "Connecting to ADDR")
}

// TestScripts runs each testdata/NAME.script through the shell in stdin
// mode and compares stdout, stderr and the exit status with what Apache's
// zkCli.sh 3.8 printed for the same script against a fresh Apache 3.8
// server (NAME.stdout and NAME.stderr, normalised; the ttl and ephemeral
// owners, dates and address vary). The exit status is the last command's.
func TestScripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"basic", 0},  // create/get/set/stat/ls/delete, ACLs, whoami, sync, quotas
		{"errors", 0}, // error messages, path validation, ACL parsing, history/redo
		{"watches", 1},
		{"quota", 0},
		{"acl", 1}, // ACL parsing and errors, watch removal, usage errors
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := startZoo(t)
			script := readTestdata(t, tc.name+".script")
			stdout, stderr, status := run(t, script, "-server", addr, "-timeout", "10000")
			if status != tc.status {
				t.Errorf("exit status %d; want %d", status, tc.status)
			}
			compare(t, "stdout", normalise(stdout), normalise(readTestdata(t, tc.name+".stdout")))
			compare(t, "stderr", normalise(stderr), normalise(readTestdata(t, tc.name+".stderr")))
		})
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compare reports the first line where got and want differ.
func compare(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := line(g, i), line(w, i)
		if gl != wl {
			t.Errorf("%s differs at line %d:\n got: %q\nwant: %q\nwhole %s:\n%s", what, i+1, gl, wl, what, got)
			return
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<none>"
}
