package fourlw

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// serve answers four-letter words on a loopback listener until the test
// ends, the way the server will: read four bytes, Respond, close.
func serve(t *testing.T, src Source, wl Whitelist) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var word [4]byte
			if _, err := io.ReadFull(c, word[:]); err == nil {
				if out, ok := Respond(string(word[:]), wl, src); ok {
					_, _ = io.WriteString(c, out)
				}
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// fourLetter sends word to addr and returns the whole answer.
func fourLetter(addr, word string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

// TestGoZookeeperParsesSrvr runs go-zookeeper's own four-letter-word helpers
// against Format's answers. Its srvr parser accepts only Apache 3.4's build
// date ("02/12/2024 20:59 GMT"), so, as against Apache 3.8 (whose layout
// FullVersion uses), FLWSrvr reports a parse error; FLWRuok works.
func TestGoZookeeperParsesSrvr(t *testing.T) {
	f := apacheFollower()
	f.stats.Version = FullVersion("3.9.2-zoo", time.Date(2024, 2, 12, 20, 59, 0, 0, time.UTC))
	addr := serve(t, f, NewWhitelist([]string{"*"}))

	stats, ok := zk.FLWSrvr([]string{addr}, 5*time.Second)
	if ok || len(stats) != 1 || stats[0].Error == nil {
		t.Fatalf("FLWSrvr: ok=%v stats=%+v; want the parse error it gives against Apache 3.8", ok, stats)
	}
	if oks := zk.FLWRuok([]string{addr}, 5*time.Second); len(oks) != 1 || !oks[0] {
		t.Errorf("FLWRuok = %v", oks)
	}
}

// TestGoZookeeperSrvrDefaultWhitelist checks that srvr answers with no
// whitelist configured, as zkServer.sh status and go-zookeeper expect.
func TestGoZookeeperSrvrDefaultWhitelist(t *testing.T) {
	f := apacheStandalone()
	f.stats.Version = FullVersion("3.9.2-zoo", time.Unix(0, 0))
	addr := serve(t, f, Whitelist{})
	out, err := fourLetter(addr, "srvr")
	if err != nil || !strings.Contains(out, "Mode: standalone\n") {
		t.Fatalf("srvr with the default whitelist: %q, %v", out, err)
	}
	if oks := zk.FLWRuok([]string{addr}, 5*time.Second); oks[0] {
		t.Errorf("FLWRuok succeeded with ruok not whitelisted")
	}
}
