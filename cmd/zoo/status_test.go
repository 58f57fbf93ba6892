package main

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
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
