package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/config"
)

// fourLetterServer answers mntr and srvr with canned text, as a Zoo
// leader would, and closes every other connection.
func fourLetterServer(t *testing.T, answers map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			word := make([]byte, 4)
			if _, err := io.ReadFull(c, word); err == nil {
				_, _ = io.WriteString(c, answers[string(word)])
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestStatus(t *testing.T) {
	leader := fourLetterServer(t, map[string]string{
		"mntr": "zk_version\t3.9.2\nzk_server_state\tleader\nzk_zoo_server_id\t1\nzk_zoo_raft_term\t4\n" +
			"zk_zoo_leader_id\t1\nzk_zoo_peers_connected\t2\nzk_zoo_peer_3_lag\t15\nzk_zoo_peer_2_lag\t0\n",
		"srvr": "Zookeeper version: 3.9.2\nZxid: 0x4f\nMode: leader\n",
	})
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	var out bytes.Buffer
	err = runStatus([]string{leader + "," + deadAddr}, &out)
	if err == nil || !strings.Contains(err.Error(), deadAddr) {
		t.Errorf("error %v; want one naming %s", err, deadAddr)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != leader+" 1 leader 4 0x4f 1 2 2:0 3:15" {
		t.Errorf("leader line %q", lines[1])
	}
	if !strings.Contains(lines[2], "unreachable") {
		t.Errorf("unreachable server's line %q", lines[2])
	}
}

// A server whose whitelist leaves out mntr (Apache's default allows srvr
// only) is shown from srvr: live, with its role and zxid.
func TestStatusSrvrOnly(t *testing.T) {
	addr := fourLetterServer(t, map[string]string{
		"mntr": "mntr is not executed because it is not in the whitelist.\n",
		"srvr": "Zookeeper version: 3.8.0\nZxid: 0x12\nMode: standalone\nNode count: 5\n",
	})
	var out bytes.Buffer
	if err := runStatus([]string{addr}, &out); err != nil {
		t.Fatalf("status: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if f := strings.Fields(lines[1]); len(f) < 5 || f[2] != "standalone" || f[4] != "0x12" {
		t.Errorf("line %q", lines[1])
	}
}

// "zoo server -h" prints the usage, with the [zoo.cfg] argument, and is
// not an error.
func TestServerHelp(t *testing.T) {
	if err := runServer([]string{"--help"}); err != nil {
		t.Fatalf("--help: %v", err)
	}
	if !strings.Contains(serverUsage, "usage: zoo server [flags] [zoo.cfg]") {
		t.Fatalf("usage %q", serverUsage)
	}
}

// -log-format json writes one JSON object a line; -log-file appends to
// the file.
func TestLoggerJSONFile(t *testing.T) {
	path := t.TempDir() + "/zoo.log"
	log, closeLog, err := newLogger("json", path, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("serving", "addr", "127.0.0.1:2181")
	closeLog()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil || rec["msg"] != "serving" || rec["addr"] != "127.0.0.1:2181" {
		t.Fatalf("log %q: %v", b, err)
	}
	if _, _, err := newLogger("xml", "", slog.LevelInfo); err == nil {
		t.Fatal("-log-format xml accepted")
	}
}

// With no zoo.cfg, the AdminServer listens on loopback only, like the
// client port: a first run exposes nothing to the network.
func TestDefaultAdminLoopback(t *testing.T) {
	cfg := config.Default()
	if !cfg.AdminEnableServer || cfg.AdminAddr() != "127.0.0.1:8080" || cfg.ClientAddr() != "127.0.0.1:2181" {
		t.Fatalf("default admin %v %s, client %s", cfg.AdminEnableServer, cfg.AdminAddr(), cfg.ClientAddr())
	}
}
