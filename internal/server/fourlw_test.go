package server

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// nodeCount parses "Node count: N" from srvr.
func nodeCount(t testing.TB, srvr string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Node count: (\d+)$`).FindStringSubmatch(srvr)
	if m == nil {
		t.Fatalf("no node count in srvr:\n%s", srvr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The four-letter words answer on a fresh connection with text that
// monitoring tools parse. Ref: administrator's guide, "The Four Letter
// Words"; the byte-exact formats are tested in package fourlw.
func TestFourLetterWords(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			before := nodeCount(t, fourLetter(t, tg.addr, "srvr"))
			root := testRoot(t, c)
			c.create(root+"/x", nil, 0)
			c.mustCall(jute.OpGetData, &jute.PathWatch{Path: root + "/x", Watch: true}, nil, jute.OK)
			sid := fmt.Sprintf("0x%x", c.sid)

			for _, tc := range []struct {
				word string
				want []string // substrings, each a whole line unless it ends the pattern early
				also func(t *testing.T, out string)
			}{
				{word: "ruok", also: func(t *testing.T, out string) {
					if out != "imok" {
						t.Errorf("ruok: %q", out)
					}
				}},
				{word: "srvr", want: []string{"Zookeeper version: 3.", "\nMode: standalone\n", "\nLatency min/avg/max: "},
					also: func(t *testing.T, out string) {
						if got := nodeCount(t, out); got != before+2 {
							t.Errorf("node count %d, want %d", got, before+2)
						}
					}},
				{word: "stat", want: []string{"Clients:\n /127.0.0.1:", "\nMode: standalone\n", "\nNode count: "}},
				{word: "cons", want: []string{" /127.0.0.1:", "sid=" + sid}},
				{word: "mntr", want: []string{"zk_version\t3.", "\nzk_server_state\tstandalone\n", "\nzk_znode_count\t", "\nzk_watch_count\t"}},
				{word: "wchs", want: []string{" connections watching ", " paths\nTotal watches:"}},
				{word: "envi", want: []string{"Environment:\n", "\nzookeeper.version=3."}},
			} {
				t.Run(tc.word, func(t *testing.T) {
					out := fourLetter(t, tg.addr, tc.word)
					for _, w := range tc.want {
						if !strings.Contains(out, w) {
							t.Errorf("%s lacks %q:\n%s", tc.word, w, out)
						}
					}
					if tc.also != nil {
						tc.also(t, out)
					}
				})
			}
			// The session whose connection asked nothing is undisturbed.
			c.getData(root + "/x")
		})
	}
}

// Zoo reports itself as ZooKeeper 3.9 (Config.Version) wherever a
// version shows, since clients parse its leading digits.
func TestFourLetterVersion(t *testing.T) {
	ts := startServer(t, nil)
	for word, want := range map[string]string{
		"envi": "\nzookeeper.version=3.9.2-zoo, built on ",
		"srvr": "Zookeeper version: 3.9.2-zoo, built on ",
		"mntr": "zk_version\t3.9.2-zoo, built on ",
	} {
		if out := fourLetter(t, ts.addr, word); !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", word, want, out)
		}
	}
}

// A known word outside 4lw.commands.whitelist is refused with Apache's
// message; srvr is always allowed (zkServer.sh status needs it).
func TestFourLetterWhitelist(t *testing.T) {
	for _, tc := range []struct {
		name      string
		whitelist []string
		allowed   []string
		refused   []string
	}{
		{"default", nil, []string{"srvr"}, []string{"ruok", "stat", "mntr", "envi", "dump"}},
		{"some", []string{"ruok, mntr", "cons"}, []string{"ruok", "mntr", "cons", "srvr"}, []string{"stat", "dump", "wchs", "conf"}},
		{"all", []string{"*"}, []string{"ruok", "dump", "conf", "wchc", "isro"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) { c.FourLetterWords = tc.whitelist })
			for _, w := range tc.allowed {
				if out := fourLetter(t, ts.addr, w); out == "" || strings.Contains(out, "not executed") {
					t.Errorf("%s: %q, want it answered", w, out)
				}
			}
			for _, w := range tc.refused {
				want := w + " is not executed because it is not in the whitelist.\n"
				if out := fourLetter(t, ts.addr, w); out != want {
					t.Errorf("%s: %q, want %q", w, out, want)
				}
			}
		})
	}
}

// Four bytes that are not a command are a frame length; as letters they
// make a length far above jute.maxbuffer, so the connection closes with no
// answer, and the server goes on.
func TestFourLetterUnknownWord(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			for _, word := range []string{"abcd", "RUOK", "kill", "zzzz"} {
				c := dialRaw(t, tg.addr)
				c.writeRaw([]byte(word))
				c.expectClosedSilently()
			}
			if out := fourLetter(t, tg.addr, "ruok"); out != "imok" {
				t.Fatalf("ruok: %q", out)
			}
		})
	}
}

// stmk takes an 8-byte trace mask after the word, sets it and answers
// with it; gtmk reads it back.
func TestFourLetterTraceMask(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			orig := fourLetter(t, tg.addr, "gtmk")
			defer func() {
				n, _ := strconv.ParseInt(orig, 10, 64)
				fourLetter(t, tg.addr, "stmk"+string(binary.BigEndian.AppendUint64(nil, uint64(n))))
			}()
			for _, mask := range []int64{0x1ff, 2} {
				arg := binary.BigEndian.AppendUint64(nil, uint64(mask))
				if got := fourLetter(t, tg.addr, "stmk"+string(arg)); got != strconv.FormatInt(mask, 10) {
					t.Errorf("stmk %d answered %q", mask, got)
				}
				if got := fourLetter(t, tg.addr, "gtmk"); got != strconv.FormatInt(mask, 10) {
					t.Errorf("gtmk after stmk %d answered %q", mask, got)
				}
			}
		})
	}
}
