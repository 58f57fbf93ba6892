package bench

import (
	"fmt"
	"testing"
)

func TestParseWchs(t *testing.T) {
	// Apache 3.8's and Zoo's wchs reply.
	w := parseWchs("3 connections watching 500 paths\nTotal watches:512\n")
	if w != (Wchs{3, 500, 512}) {
		t.Errorf("%+v", w)
	}
	if w := parseWchs("wchs is not executed because it is not in the whitelist.\n"); w != (Wchs{-1, -1, -1}) {
		t.Errorf("a refusal read as %+v", w)
	}
}

func TestParseMntr(t *testing.T) {
	m := parseMntr("zk_version\t3.8.0-zoo, built on x\nzk_znode_count\t42\nzk_watch_count\t7\nnot a line\n")
	if m["zk_znode_count"] != "42" || m["zk_watch_count"] != "7" || len(m) != 2 {
		t.Errorf("%v", m)
	}
}

func TestStatusField(t *testing.T) {
	status := []byte("Name:\tzoo\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
	if v, ok := statusField(status, "VmRSS"); !ok || v != 102400 {
		t.Errorf("VmRSS %d %v", v, ok)
	}
	if _, ok := statusField(status, "VmSwap"); ok {
		t.Error("a missing field was found")
	}
	if _, ok := statusField([]byte("VmRSS:\n"), "VmRSS"); ok {
		t.Error("an empty field was read")
	}
}

// The four-letter-word replies come from the network: any bytes are
// read without a panic, and a well-formed wchs reply reads back exactly.
func FuzzParseWchs(f *testing.F) {
	f.Add("3 connections watching 500 paths\nTotal watches:512\n", int64(1), int64(2), int64(3))
	f.Add("", int64(0), int64(0), int64(0))
	f.Add("Total watches:\n%d connections", int64(-1), int64(9), int64(1<<40))
	f.Fuzz(func(t *testing.T, junk string, c, p, n int64) {
		parseWchs(junk)
		parseMntr(junk)
		statusField([]byte(junk), "VmRSS")
		if c < 0 || p < 0 || n < 0 {
			return
		}
		got := parseWchs(fmt.Sprintf("%d connections watching %d paths\nTotal watches:%d\n", c, p, n))
		if got != (Wchs{c, p, n}) {
			t.Errorf("read %+v from %d, %d, %d", got, c, p, n)
		}
	})
}
