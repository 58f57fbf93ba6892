package fourlw

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestApacheCaptures feeds Format the values behind each capture of Apache
// 3.8.0 in testdata/apache and requires the same bytes.
func TestApacheCaptures(t *testing.T) {
	tests := []struct {
		file string
		cmd  string
		src  func() *fake
	}{
		{"standalone_ruok", "ruok", apacheStandalone},
		{"standalone_isro", "isro", apacheStandalone},
		{"standalone_gtmk", "gtmk", apacheStandalone},
		{"standalone_srvr", "srvr", apacheStandalone},
		{"standalone_stat", "stat", func() *fake {
			f := apacheStandalone()
			f.stats.Received, f.stats.Sent = 255, 256
			f.conns[1].Remote = "127.0.0.1:54078"
			return f
		}},
		{"standalone_cons", "cons", apacheStandalone},
		{"standalone_conf", "conf", apacheStandalone},
		{"standalone_dirs", "dirs", apacheStandalone},
		{"standalone_envi", "envi", apacheStandalone},
		{"standalone_wchs", "wchs", apacheStandalone},
		{"standalone_wchc", "wchc", apacheStandalone},
		{"standalone_wchp", "wchp", apacheStandalone},
		{"standalone_dump", "dump", apacheStandalone},
		{"standalone_crst", "crst", apacheStandalone},
		{"standalone_srst", "srst", apacheStandalone},
		{"standalone_mntr", "mntr", func() *fake {
			f := apacheStandalone()
			f.stats.Received, f.stats.Sent = 266, 267
			return f
		}},
		{"follower_srvr", "srvr", apacheFollower},
		{"follower_stat", "stat", func() *fake {
			f := apacheFollower()
			f.stats.Received, f.stats.Sent = 77, 80
			f.conns[1].Remote = "127.0.0.1:42140"
			return f
		}},
		{"follower_cons", "cons", apacheFollower},
		{"follower_dump", "dump", apacheFollower},
		{"follower_mntr", "mntr", func() *fake {
			f := apacheFollower()
			f.stats.Received, f.stats.Sent = 79, 82
			return f
		}},
		{"leader_srvr", "srvr", apacheLeader},
		{"leader_stat", "stat", func() *fake {
			f := apacheLeader()
			f.stats.Received, f.stats.Sent = 18, 23
			return f
		}},
		{"leader_conf", "conf", apacheLeader},
		{"leader_dump", "dump", apacheLeader},
		{"leader_mntr", "mntr", func() *fake {
			f := apacheLeader()
			f.stats.Received, f.stats.Sent = 20, 25
			return f
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "apache", tt.file+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := Respond(tt.cmd, NewWhitelist([]string{"*"}), tt.src())
			if !ok {
				t.Fatalf("Respond(%q) not ok", tt.cmd)
			}
			if got != string(want) {
				t.Errorf("%s:\n got: %q\nwant: %q", tt.cmd, got, want)
			}
		})
	}
}

// TestGolden covers what the Apache captures do not: a server that is not
// serving, read-only mode, Zoo's own version string, IPv6 peers, a time zone.
func TestGolden(t *testing.T) {
	zoo := func() *fake {
		f := apacheStandalone()
		f.stats.Version = FullVersion("3.9.2-zoo", time.Date(2024, 2, 12, 20, 59, 0, 0, time.UTC))
		f.conns = append(f.conns, Conn{Remote: "[::1]:4000", Interest: 1, SessionID: 0x200000000000001,
			LastOp: "NA", Created: ms(0), Timeout: 30000, LastCxid: 0x10, LastZxid: -1})
		f.env = []KV{{"host.name", "zoo1"}, {"go.version", "go1.26"}}
		f.dump.Location = time.FixedZone("CET", 3600)
		return f
	}
	tests := []struct {
		name string
		cmd  string
		src  func() *fake
	}{
		{"zoo_srvr", "srvr", zoo},
		{"zoo_cons", "cons", zoo},
		{"zoo_envi", "envi", zoo},
		{"zoo_dump", "dump", zoo},
		{"readonly_srvr", "srvr", func() *fake {
			f := zoo()
			f.stats.ReadOnly, f.stats.Mode = true, ModeReadOnly
			return f
		}},
		{"readonly_isro", "isro", func() *fake {
			f := zoo()
			f.stats.ReadOnly = true
			return f
		}},
		{"notserving_isro", "isro", func() *fake {
			f := zoo()
			f.notServing = true
			return f
		}},
		{"notserving_stat", "stat", func() *fake {
			f := zoo()
			f.notServing = true
			return f
		}},
		{"observer_mntr", "mntr", func() *fake {
			f := apacheFollower()
			f.stats.Mode = ModeObserver
			f.monitor.PeerState = "observing - broadcast"
			f.monitor.ObserverMasterID = 2
			f.monitor.Extra = nil
			return f
		}},
		{"empty_wchc", "wchc", func() *fake { return &fake{} }},
		{"empty_wchs", "wchs", func() *fake { return &fake{} }},
		{"empty_srvr", "srvr", func() *fake { return &fake{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Format(tt.cmd, tt.src())
			if !ok {
				t.Fatalf("Format(%q) not ok", tt.cmd)
			}
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s:\n got: %q\nwant: %q", tt.cmd, got, want)
			}
		})
	}
}

func TestWhitelist(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		allowed []string
		denied  []string
	}{
		// Ref: Apache 3.8 with no 4lw.commands.whitelist answers only srvr.
		{"default", nil, []string{"srvr"}, []string{"ruok", "stat", "mntr", "isro", "envi", "dirs"}},
		{"all", []string{"*"}, []string{"ruok", "mntr", "dump", "srvr", telnetClose}, []string{"xyzw"}},
		{"list with spaces", []string{"stat, ruok ,, mntr"}, []string{"stat", "ruok", "mntr", "srvr"}, []string{"conf"}},
		{"split entries", []string{"stat", " envi"}, []string{"stat", "envi"}, []string{"ruok"}},
		{"star among others", []string{"ruok, *"}, []string{"conf", "wchp"}, nil},
	}
	for _, tt := range tests {
		w := NewWhitelist(tt.entries)
		for _, c := range tt.allowed {
			if !w.Allows(c) {
				t.Errorf("%s: %q denied", tt.name, c)
			}
		}
		for _, c := range tt.denied {
			if w.Allows(c) {
				t.Errorf("%s: %q allowed", tt.name, c)
			}
		}
	}
	var zero Whitelist
	if !zero.Allows("srvr") || zero.Allows("ruok") {
		t.Error("zero Whitelist is not srvr-only")
	}
}

func TestRespond(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "apache", "notwhitelisted_ruok.txt"))
	if err != nil {
		t.Fatal(err)
	}
	src := apacheStandalone()
	tests := []struct {
		word   string
		wl     []string
		want   string
		wantOK bool
	}{
		{"ruok", nil, string(want), true},
		{"ruok", []string{"ruok"}, "imok", true},
		{"xyzw", []string{"*"}, "", false}, // not a command: a length prefix
		{"\x00\x00\x00\x2c", []string{"*"}, "", false},
		{telnetClose, nil, "telnet close is not executed because it is not in the whitelist.\n", true},
		{telnetClose, []string{"*"}, "", true},
		{"srvr", nil, "Zookeeper version: ", true}, // prefix
	}
	for _, tt := range tests {
		got, ok := Respond(tt.word, NewWhitelist(tt.wl), src)
		if ok != tt.wantOK || !strings.HasPrefix(got, tt.want) || (tt.word != "srvr" && got != tt.want) {
			t.Errorf("Respond(%q, %v) = %q, %v; want %q, %v", tt.word, tt.wl, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestResetsCallSource(t *testing.T) {
	f := apacheStandalone()
	Format("crst", f)
	Format("srst", f)
	Format("srst", f)
	if f.connResets != 1 || f.statsResets != 2 {
		t.Fatalf("resets: conn %d, stats %d; want 1, 2", f.connResets, f.statsResets)
	}
	f = apacheStandalone()
	f.notServing = true
	if got, _ := Format("crst", f); got != notServing || f.connResets != 0 {
		t.Fatalf("crst while not serving: %q, resets %d", got, f.connResets)
	}
}

func TestIsCommand(t *testing.T) {
	for _, c := range []string{"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
		"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash", telnetClose} {
		if !IsCommand(c) {
			t.Errorf("IsCommand(%q) = false", c)
		}
	}
	// 3.9 additions and junk are length prefixes to a 3.8 server. (hash
	// is not one: Debian's Apache 3.8.0 answers it.)
	for _, c := range []string{"icfg", "sysp", "RUOK", "", "ruo", "ruokk"} {
		if IsCommand(c) {
			t.Errorf("IsCommand(%q) = true", c)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	// Ref: java.lang.Double.toString.
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{6.5, "6.5"},
		{0.4531, "0.4531"},
		{2.5714, "2.5714"},
		{0.001, "0.001"},
		{0.0001, "1.0E-4"},
		{1234567.5, "1234567.5"},
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{-3.25, "-3.25"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		if got := javaDouble(tt.v); got != tt.want {
			t.Errorf("javaDouble(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestLatencyAvg(t *testing.T) {
	// Ref: Apache AvgMinMaxCounter.getAvg, BigDecimal.setScale(4, HALF_UP).
	tests := []struct {
		total, count int64
		want         float64
	}{
		{0, 0, 0},
		{13, 2, 6.5},
		{18, 7, 2.5714},
		{29, 64, 0.4531},  // 0.453125
		{1, 32, 0.0313},   // 0.03125 is exact in binary: half rounds up
		{3, 32, 0.0938},   // 0.09375
		{2, 3, 0.6667},    // 0.666...
		{5, 1, 5},         // integral
		{-1, 32, -0.0313}, // HALF_UP rounds away from zero
		{1 << 60, 3, 3.843071682022823e17},
	}
	for _, tt := range tests {
		l := Latency{Total: tt.total, Count: tt.count}
		if got := l.Avg(); got != tt.want {
			t.Errorf("avg(%d/%d) = %v, want %v", tt.total, tt.count, got, tt.want)
		}
	}
}

func TestFullVersionParsesLikeClients(t *testing.T) {
	v := FullVersion("3.9.2-zoo", time.Date(2024, 2, 12, 20, 59, 30, 0, time.FixedZone("X", 7200)))
	if want := "3.9.2-zoo, built on 2024-02-12 18:59 UTC"; v != want {
		t.Fatalf("FullVersion = %q, want %q", v, want)
	}
	// Apache 3.8's srvr (testdata/apache/follower_srvr.txt) uses this layout.
	if _, err := time.Parse("2006-01-02 15:04 MST", strings.TrimPrefix(v, "3.9.2-zoo, built on ")); err != nil {
		t.Fatalf("could not parse %q in Apache 3.8's layout: %v", v, err)
	}
}

// TestKazooParsesEnvi applies kazoo's KazooClient.server_version parsing
// (split lines on "=", take zookeeper.version, match ([\d\.]*)) to envi.
func TestKazooParsesEnvi(t *testing.T) {
	f := apacheStandalone()
	f.stats.Version = FullVersion("3.9.2-zoo", time.Unix(0, 0))
	out, _ := Format("envi", f)
	var version string
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "zookeeper.version" {
			version = strings.TrimSpace(v)
		}
	}
	digits := regexp.MustCompile(`^([\d\.]*)`).FindString(version)
	if digits != "3.9.2" {
		t.Fatalf("kazoo would read version %q from %q", digits, version)
	}
}

// hash prints Apache's DigestCommand lines: the zxid in hex, the digest as
// a signed decimal; Apache 3.8.0 answered "80: 271806987338" after 128
// txns.
func TestHashFormat(t *testing.T) {
	f := apacheStandalone()
	f.digests = []ZxidDigest{{Zxid: 0x80, Digest: 271806987338}, {Zxid: 0x100, Digest: -5}}
	got, _ := Format("hash", f)
	if want := "80: 271806987338\n100: -5\n"; got != want {
		t.Fatalf("hash: %q, want %q", got, want)
	}
	f.notServing = true
	if got, _ := Format("hash", f); got != notServing {
		t.Fatalf("hash while not serving: %q", got)
	}
}
