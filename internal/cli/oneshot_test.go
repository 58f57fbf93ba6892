package cli

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestOneShot runs single commands given on the command line. The
// expected output and exit statuses are zkCli.sh 3.8's in the same mode
// ("zkCli.sh -server ADDR cmd args"), except that we print no connection
// event.
func TestOneShot(t *testing.T) {
	t.Parallel()
	addr := startZoo(t)
	usageTail := "\twhoami \nCommand not found: Command not found bogus\n"
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		status         int
	}{
		{[]string{"create", "/a", "hello world"}, "", "Created /a\n", 0},
		{[]string{"create", "/a"}, "", "Node already exists: /a\n", 1},
		{[]string{"get", "/a"}, "hello world\n", "", 0},
		{[]string{"set", "/a", "b"}, "", "", 0},
		{[]string{"ls", "/"}, "[a, zookeeper]\n", "", 0},
		{[]string{"get", "/nope"}, "", "Node does not exist: /nope\n", 1},
		{[]string{"ls"}, "", "ls [-s] [-w] [-R] path\n", 1},
		{[]string{"ls", "-x", "/"}, "", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n", 1},
		{[]string{"whoami"}, "Auth scheme: User\nip: 127.0.0.1\n", "", 0},
		{[]string{"listquota", "/nope"}, "", "absolute path is /zookeeper/quota/nope/zookeeper_limits\nquota for /nope does not exist.\n", 0},
		{[]string{"delquota", "/nope"}, "Quota does not exist for /nope\n", "", 0},
		{[]string{"setquota", "-n", "1", "/nope"}, "", "/nope does not exist.\n", 1},
		{[]string{"removewatches", "/x"}, "", "KeeperErrorCode = No such watcher for /x\n", 1},
		{[]string{"redo", "0"}, "", "Command index out of range\n", 1},
		{[]string{"deleteall", "/a"}, "", "", 0},
		{[]string{"quit"}, "", "", 0},
		{[]string{"bogus"}, "", usageTail, 127},
		{[]string{"help"}, "", strings.ReplaceAll(usageTail, "bogus", "help"), 127},
	} {
		stdout, stderr, status := run(t, "", append([]string{"-server", addr}, tc.args...)...)
		if status != tc.status {
			t.Errorf("%q: exit status %d; want %d", tc.args, status, tc.status)
		}
		if stdout != tc.stdout {
			t.Errorf("%q: stdout %q; want %q", tc.args, stdout, tc.stdout)
		}
		if !strings.HasSuffix(stderr, tc.stderr) || tc.stderr == "" && stderr != "" {
			t.Errorf("%q: stderr %q; want %q", tc.args, stderr, tc.stderr)
		}
	}
}

// TestConnectFailure: with no server, a one-shot command fails.
func TestConnectFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, stderr, status := run(t, "", "-server", addr, "-timeout", "300", "ls", "/")
	if status != exitError || stderr == "" {
		t.Errorf("status %d, stderr %q; want %d and an error", status, stderr, exitError)
	}
}

// TestBadFlags: an unknown flag of "zoo cli" itself is a usage error.
func TestBadFlags(t *testing.T) {
	t.Parallel()
	if _, _, status := run(t, "", "-nosuchflag"); status != 2 {
		t.Errorf("status %d; want 2", status)
	}
}

// TestConnectRefusedFast: when every server refuses the connection, a
// one-shot command fails at once, as zkCli does (in 0.65 s), not after the
// 30 s session timeout.
func TestConnectRefusedFast(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	_, stderr, status := run(t, "", "-server", addr+","+addr, "ls", "/")
	if status != exitError || !strings.Contains(stderr, "ConnectionLoss") {
		t.Errorf("status %d, stderr %q; want %d and ConnectionLoss", status, stderr, exitError)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
}
