package server

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every way a client sends a four-letter word gets the whole answer:
// nc and zkServer.sh status (Apache's FourLetterWordMain) half-close their
// side right after the word, others wait with the socket open, and a slow
// link splits the word across packets. Each is tried many times because
// losing the answer was a race between the reply and the close.
func TestFourLetterDelivery(t *testing.T) {
	ways := []struct {
		name string
		send func(c *net.TCPConn, word string) error
	}{
		{"write-and-half-close", func(c *net.TCPConn, word string) error {
			if _, err := io.WriteString(c, word); err != nil {
				return err
			}
			return c.CloseWrite()
		}},
		{"write-and-wait", func(c *net.TCPConn, word string) error {
			_, err := io.WriteString(c, word)
			return err
		}},
		{"split-then-half-close", func(c *net.TCPConn, word string) error {
			// Go sets TCP_NODELAY: each write leaves as its own segment.
			for i := range len(word) {
				if _, err := io.WriteString(c, word[i:i+1]); err != nil {
					return err
				}
			}
			return c.CloseWrite()
		}},
		{"word-and-newline-half-close", func(c *net.TCPConn, word string) error {
			if _, err := io.WriteString(c, word+"\n"); err != nil { // echo ruok | nc
				return err
			}
			return c.CloseWrite()
		}},
	}
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			for _, w := range ways {
				t.Run(w.name, func(t *testing.T) {
					for i := range 20 {
						for word, want := range map[string]string{"ruok": "imok", "isro": "rw", "srvr": "Zookeeper version: "} {
							got, err := sendWord(tg.addr, word, w.send)
							if err != nil || !strings.HasPrefix(got, want) {
								t.Fatalf("try %d, %s: %q, %v; want %q...", i, word, got, err, want)
							}
						}
					}
				})
			}
		})
	}
}

func sendWord(addr, word string, send func(*net.TCPConn, string) error) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return "", err
	}
	c := nc.(*net.TCPConn)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(ioTimeout))
	if err := send(c, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

// Python's socket.shutdown(SHUT_WR) after sendall, as monitoring scripts
// do it; skipped only when python3 is absent.
func TestFourLetterPythonHalfClose(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	ts := startServer(t, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	script := `
import socket, sys
ok = 0
for _ in range(20):
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
    s.sendall(b"ruok")
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    ok += data == b"imok"
print(ok)
`
	out, err := exec.Command(py, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(out))); n != 20 {
		t.Fatalf("%s of 20 answers arrived", strings.TrimSpace(string(out)))
	}
}

// Apache's own client, FourLetterWordMain (what zkServer.sh status runs),
// gets its answer; skipped only when Java or Apache's jars are absent.
func TestFourLetterApacheClient(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not installed")
	}
	jars := []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar", "/usr/share/java/slf4j-simple.jar"}
	for _, j := range jars {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("Apache ZooKeeper jars not installed: %v", err)
		}
	}
	ts := startServer(t, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	for i := range 4 {
		cmd := exec.Command(java, "-cp", strings.Join(jars, ":"),
			"org.apache.zookeeper.client.FourLetterWordMain", host, port, "ruok")
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != "imok" {
			t.Fatalf("try %d: %q, %v", i, out, err)
		}
	}
}
