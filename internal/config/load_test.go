package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadEnsembleWithDynamicFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	cfg := filepath.Join(dir, "zoo.cfg")
	write(t, filepath.Join(data, "myid"), "2\n")
	write(t, dyn, "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n"+
		"server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n"+
		"server.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183\nversion=100000000\n")
	write(t, cfg, "tickTime=2000\ninitLimit=5\nsyncLimit=2\ndataDir="+data+"\ndynamicConfigFile="+dyn+"\nreconfigEnabled=true\n")
	c, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.MyID != 2 || !c.Distributed() || len(c.Servers) != 3 || c.ConfigVersion != 0x100000000 {
		t.Fatalf("MyID %d distributed %v servers %d version %#x", c.MyID, c.Distributed(), len(c.Servers), c.ConfigVersion)
	}
	if c.ClientAddr() != "127.0.0.1:2182" {
		t.Errorf("ClientAddr = %q, want this server's line", c.ClientAddr())
	}
	if c.Servers[1].Pos != (Pos{dyn, 2}) {
		t.Errorf("server.2 at %v", c.Servers[1].Pos)
	}
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	tests := []struct {
		name     string
		cfg      string
		files    map[string]string // relative to dir
		sentinel error
		where    string // prefix of the problem's position
	}{
		{"bad myid", "dataDir=" + data + "\nclientPort=1\n", map[string]string{"data/myid": "two\n"},
			ErrMyID, filepath.Join(data, "myid")},
		{"myid out of range", "dataDir=" + data + "\nclientPort=1\n", map[string]string{"data/myid": "300\n"},
			ErrMyID, filepath.Join(data, "myid")},
		{"bad dynamic key", "dataDir=" + data + "\nclientPort=1\ndynamicConfigFile=" + filepath.Join(dir, "dyn") + "\n",
			map[string]string{"dyn": "server.1=h:1:2\ntickTime=5\n"}, ErrInvalid, filepath.Join(dir, "dyn") + ":2"},
		{"missing dynamic file", "dataDir=" + data + "\nclientPort=1\ndynamicConfigFile=" + filepath.Join(dir, "nope") + "\n",
			nil, ErrInvalid, "zoo.cfg:3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.RemoveAll(data)
			for rel, text := range tt.files {
				write(t, filepath.Join(dir, rel), text)
			}
			cfg := filepath.Join(dir, "zoo.cfg")
			write(t, cfg, tt.cfg)
			_, err := Load(cfg)
			var ps Problems
			if !errors.As(err, &ps) || !errors.Is(err, tt.sentinel) {
				t.Fatalf("Load = %v, want %v", err, tt.sentinel)
			}
			found := false
			for _, p := range ps {
				found = found || errors.Is(p, tt.sentinel) && strings.HasSuffix(p.Pos.String(), tt.where)
			}
			if !found {
				t.Fatalf("no %v problem at %s in\n%v", tt.sentinel, tt.where, err)
			}
		})
	}
}

func TestLoadReportsParseAndValidateTogether(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zoo.cfg")
	write(t, cfg, "tickTime=x\nminSessionTimeout=9000\nmaxSessionTimeout=5000\n")
	c, err := Load(cfg)
	if c == nil {
		t.Fatal("Load returned no configuration alongside its problems")
	}
	msg := err.Error()
	for _, want := range []string{
		cfg + `:1: tickTime: config: invalid value: "x" is not an integer`,
		cfg + ": dataDir: config: required setting missing: dataDir is not set",
		cfg + ":3: maxSessionTimeout: config: conflicting settings",
		cfg + ": clientPort: config: required setting missing",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in\n%s", want, msg)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.cfg"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load = %v, want fs.ErrNotExist", err)
	}
}

func TestLoadMyID(t *testing.T) {
	tests := []struct {
		name, content string
		want          int64
		ok            bool
		err           bool
	}{
		{"plain", "1\n", 1, true, false},
		{"no newline", "7", 7, true, false},
		{"crlf and spaces", " 12 \r\nextra\n", 12, true, false},
		{"empty", "", 0, false, true},
		{"zero", "0\n", 0, false, true},
		{"word", "one\n", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "myid"), tt.content)
			id, ok, err := LoadMyID(dir)
			if id != tt.want || ok != tt.ok || (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrMyID)) {
				t.Fatalf("LoadMyID = %d, %v, %v", id, ok, err)
			}
		})
	}
	id, ok, err := LoadMyID(t.TempDir())
	if id != 0 || ok || err != nil {
		t.Fatalf("no myid file: %d, %v, %v", id, ok, err)
	}
}

func TestClientAddressFromServerLine(t *testing.T) {
	// Ref: Apache 3.8 probes: with clientPort=2181 (wildcard) and this
	// server's line ";2181", the line's address is used; with no clientPort,
	// ";127.0.0.1:2191" gives 127.0.0.1:2191.
	tests := []struct {
		cfg  string
		want string
	}{
		{"clientPort=2181\nserver.2=h2:2888:3888;127.0.0.1:2181\n", "127.0.0.1:2181"},
		{"server.2=h2:2888:3888;127.0.0.1:2191\n", "127.0.0.1:2191"},
		{"clientPort=2181\nserver.2=h2:2888:3888\n", ":2181"},
	}
	for _, tt := range tests {
		c, err := Parse("zoo.cfg", []byte("dataDir=/d\ninitLimit=1\nsyncLimit=1\nserver.1=h1:2888:3888;2181\n"+tt.cfg))
		if err != nil {
			t.Fatal(err)
		}
		c.MyID = 2
		c.EnsureDefaults()
		if err := c.Validate(); err != nil {
			t.Fatalf("%q: %v", tt.cfg, err)
		}
		if got := c.ClientAddr(); got != tt.want {
			t.Errorf("%q: ClientAddr = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}
