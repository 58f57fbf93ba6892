package dockerenv

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// The zoo.cfg the official image's entrypoint writes with none of its
// variables set (the Dockerfile's defaults).
const defaultConfig = `dataDir=/data
dataLogDir=/datalog
tickTime=2000
initLimit=5
syncLimit=2
autopurge.snapRetainCount=3
autopurge.purgeInterval=0
maxClientCnxns=60
standaloneEnabled=true
admin.enableServer=true
server.1=localhost:2888:3888;2181
`

func TestBuildGeneratesAsTheOfficialImage(t *testing.T) {
	const ensemble = "server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888;2181"
	tests := []struct {
		name     string
		env      map[string]string
		hostname string
		config   string // the whole file, or "" to check only the lines below
		lines    []string
		absent   []string
		myID     int64
		conf     string
		myIDPath string
	}{
		{
			name: "defaults", env: map[string]string{},
			config: defaultConfig, myID: 1, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name:   "empty means the default, as in the image's ENV",
			env:    map[string]string{"ZOO_TICK_TIME": "", "ZOO_SERVERS": ""},
			config: defaultConfig, myID: 1, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name: "three-node ensemble",
			env:  map[string]string{"ZOO_MY_ID": "2", "ZOO_SERVERS": ensemble},
			lines: []string{
				"server.1=zoo1:2888:3888;2181", "server.2=zoo2:2888:3888;2181", "server.3=zoo3:2888:3888;2181",
			},
			myID: 2, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name: "ZOO_SERVERS split on any white space, as the shell does",
			env:  map[string]string{"ZOO_MY_ID": "3", "ZOO_SERVERS": "\n  server.1=zoo1:2888:3888;2181\n\tserver.2=zoo2:2888:3888;2181  server.3=0.0.0.0:2888:3888;2181\n"},
			lines: []string{
				"server.1=zoo1:2888:3888;2181", "server.2=zoo2:2888:3888;2181", "server.3=0.0.0.0:2888:3888;2181",
			},
			myID: 3, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name: "every setting",
			env: map[string]string{
				"ZOO_CONF_DIR": "/etc/zoo", "ZOO_DATA_DIR": "/var/lib/zoo", "ZOO_DATA_LOG_DIR": "/var/log/zoo",
				"ZOO_TICK_TIME": "1000", "ZOO_INIT_LIMIT": "10", "ZOO_SYNC_LIMIT": "4",
				"ZOO_AUTOPURGE_PURGEINTERVAL": "1", "ZOO_AUTOPURGE_SNAPRETAINCOUNT": "5",
				"ZOO_MAX_CLIENT_CNXNS": "0", "ZOO_STANDALONE_ENABLED": "false", "ZOO_ADMINSERVER_ENABLED": "false",
				"ZOO_4LW_COMMANDS_WHITELIST": "srvr,ruok,mntr", "ZOO_MY_ID": "1",
				"ZOO_SERVERS":   "server.1=zoo1:2888:3888;2181",
				"ZOO_CFG_EXTRA": "metricsProvider.httpPort=7000 snapCount=5000",
			},
			config: `dataDir=/var/lib/zoo
dataLogDir=/var/log/zoo
tickTime=1000
initLimit=10
syncLimit=4
autopurge.snapRetainCount=5
autopurge.purgeInterval=1
maxClientCnxns=0
standaloneEnabled=false
admin.enableServer=false
server.1=zoo1:2888:3888;2181
4lw.commands.whitelist=srvr,ruok,mntr
metricsProvider.httpPort=7000
snapCount=5000
`,
			myID: 1, conf: "/etc/zoo/zoo.cfg", myIDPath: "/var/lib/zoo/myid",
		},
		{
			name:   "no whitelist line unless set",
			env:    map[string]string{"ZOO_4LW_COMMANDS_WHITELIST": ""},
			absent: []string{"4lw.commands.whitelist"},
			myID:   1, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name:     "myid from a StatefulSet pod's host name",
			env:      map[string]string{MyIDFromHostname: "true", "ZOO_SERVERS": ensemble},
			hostname: "zoo-2",
			myID:     3, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
		{
			name:     "ordinal 0 is myid 1",
			env:      map[string]string{MyIDFromHostname: "true", "ZOO_SERVERS": ensemble},
			hostname: "my-zoo-0",
			myID:     1, conf: "/conf/zoo.cfg", myIDPath: "/data/myid",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(env(tt.env), tt.hostname, false)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Generated {
				t.Error("Generated is false")
			}
			if tt.config != "" && p.Config != tt.config {
				t.Errorf("zoo.cfg:\n%s\nwant:\n%s", p.Config, tt.config)
			}
			lines := strings.Split(p.Config, "\n")
			for _, l := range tt.lines {
				if !slices.Contains(lines, l) {
					t.Errorf("zoo.cfg lacks %q:\n%s", l, p.Config)
				}
			}
			for _, k := range tt.absent {
				if strings.Contains(p.Config, k) {
					t.Errorf("zoo.cfg has %q:\n%s", k, p.Config)
				}
			}
			if p.MyID != tt.myID || p.ConfPath != tt.conf || p.MyIDPath != tt.myIDPath {
				t.Errorf("myid %d at %s, conf %s; want %d at %s, %s", p.MyID, p.MyIDPath, p.ConfPath, tt.myID, tt.myIDPath, tt.conf)
			}
		})
	}
}

func TestBuildRefusesNamingTheVariable(t *testing.T) {
	const ensemble = "server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888;2181"
	tests := []struct {
		name     string
		env      map[string]string
		hostname string
		want     []string // substrings of the error
	}{
		{"tick time not a number", map[string]string{"ZOO_TICK_TIME": "2s"}, "", []string{"ZOO_TICK_TIME", "tickTime"}},
		{"sync limit not a number", map[string]string{"ZOO_SYNC_LIMIT": "x"}, "", []string{"ZOO_SYNC_LIMIT"}},
		{"standalone not a boolean", map[string]string{"ZOO_STANDALONE_ENABLED": "yes"}, "", []string{"ZOO_STANDALONE_ENABLED"}},
		{"a line smuggled into a value", map[string]string{"ZOO_TICK_TIME": "2000\nskipACL=yes"}, "", []string{"ZOO_TICK_TIME", "line break"}},
		{"a line smuggled into the whitelist", map[string]string{"ZOO_4LW_COMMANDS_WHITELIST": "srvr\nskipACL=yes"}, "", []string{"ZOO_4LW_COMMANDS_WHITELIST", "line break"}},
		{"myid not a number", map[string]string{"ZOO_MY_ID": "one"}, "", []string{"ZOO_MY_ID"}},
		{"myid 0", map[string]string{"ZOO_MY_ID": "0"}, "", []string{"ZOO_MY_ID", "1-255"}},
		{"myid 256", map[string]string{"ZOO_MY_ID": "256"}, "", []string{"ZOO_MY_ID", "1-255"}},
		{"myid not among the servers", map[string]string{"ZOO_MY_ID": "4", "ZOO_SERVERS": ensemble}, "", []string{"ZOO_MY_ID", "server.4"}},
		{"server entry without =", map[string]string{"ZOO_SERVERS": "zoo1:2888:3888"}, "", []string{"ZOO_SERVERS", "key=value"}},
		{"server entry of another key", map[string]string{"ZOO_SERVERS": "tickTime=5"}, "", []string{"ZOO_SERVERS", "server.N"}},
		{"server entry without election port", map[string]string{"ZOO_SERVERS": "server.1=zoo1:2888"}, "", []string{"ZOO_SERVERS", "server.1"}},
		{"3.4-style servers without a client port", map[string]string{
			"ZOO_MY_ID": "1", "ZOO_SERVERS": "server.1=zoo1:2888:3888 server.2=zoo2:2888:3888 server.3=zoo3:2888:3888",
		}, "", []string{"ZOO_SERVERS", ";2181"}},
		{"extra entry without =", map[string]string{"ZOO_CFG_EXTRA": "snapCount"}, "", []string{"ZOO_CFG_EXTRA", "key=value"}},
		{"extra entry with a bad value", map[string]string{"ZOO_CFG_EXTRA": "snapCount=many"}, "", []string{"ZOO_CFG_EXTRA", "snapCount"}},
		{"host name without ordinal", map[string]string{MyIDFromHostname: "true", "ZOO_SERVERS": ensemble}, "zoo", []string{MyIDFromHostname, `"zoo"`}},
		{"host name ordinal beyond 254", map[string]string{MyIDFromHostname: "true"}, "zoo-255", []string{MyIDFromHostname, "256"}},
		{"host name ordinal beyond the servers", map[string]string{MyIDFromHostname: "true", "ZOO_SERVERS": ensemble}, "zoo-3", []string{MyIDFromHostname + ": myid", "server.4"}},
		{"both ways of giving myid", map[string]string{MyIDFromHostname: "true", "ZOO_MY_ID": "1"}, "zoo-0", []string{MyIDFromHostname, "ZOO_MY_ID"}},
		{"from-hostname not a boolean", map[string]string{MyIDFromHostname: "yes"}, "zoo-0", []string{MyIDFromHostname}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(env(tt.env), tt.hostname, false)
			if err == nil {
				t.Fatalf("no error; zoo.cfg:\n%s", p.Config)
			}
			t.Log(err)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// With a zoo.cfg in place the variables that would shape a new one are
// not read (a bad one does not stop the server), only listed.
func TestBuildWithMountedConfig(t *testing.T) {
	p, err := Build(env(map[string]string{
		"ZOO_TICK_TIME": "not-a-number", "ZOO_SERVERS": "garbage", "ZOO_MY_ID": "2",
	}), "", true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Generated || p.Config != "" {
		t.Errorf("generated a zoo.cfg: %+v", p)
	}
	if want := []string{"ZOO_TICK_TIME", "ZOO_SERVERS"}; !slices.Equal(p.ConfigVars, want) {
		t.Errorf("ConfigVars = %v, want %v", p.ConfigVars, want)
	}
	if p.MyID != 2 {
		t.Errorf("myid = %d, want 2", p.MyID)
	}
	if _, err := Build(env(map[string]string{"ZOO_MY_ID": "x"}), "", true); err == nil {
		t.Error("a bad ZOO_MY_ID passes with a mounted zoo.cfg; the myid file is still written from it")
	}
}

func TestApplyWritesOnlyMissingFiles(t *testing.T) {
	dir := t.TempDir()
	e := env(map[string]string{
		"ZOO_CONF_DIR": filepath.Join(dir, "conf"), "ZOO_DATA_DIR": filepath.Join(dir, "data"), "ZOO_MY_ID": "1",
	})
	p, err := Build(e, "", false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if !r.WroteConfig || !r.WroteMyID || r.KeptMyID != "" {
		t.Errorf("first Apply: %+v", r)
	}
	readFile(t, p.ConfPath, p.Config)
	readFile(t, p.MyIDPath, "1\n")

	// The operator edits zoo.cfg and the id changes in the environment:
	// both files on disk win.
	const edited = "dataDir=/elsewhere\n"
	if err := os.WriteFile(p.ConfPath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	p2, err := Build(env(map[string]string{
		"ZOO_CONF_DIR": filepath.Join(dir, "conf"), "ZOO_DATA_DIR": filepath.Join(dir, "data"), "ZOO_MY_ID": "3",
	}), "", true)
	if err != nil {
		t.Fatal(err)
	}
	r, err = Apply(p2)
	if err != nil {
		t.Fatal(err)
	}
	if r.WroteConfig || r.WroteMyID || r.KeptMyID != "1" {
		t.Errorf("second Apply: %+v, want nothing written and myid 1 kept", r)
	}
	readFile(t, p.ConfPath, edited)
	readFile(t, p.MyIDPath, "1\n")
}

func TestApplyReportsUnwritableDirectories(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A data "directory" below a regular file cannot be created.
	p, err := Build(env(map[string]string{
		"ZOO_CONF_DIR": filepath.Join(dir, "conf"), "ZOO_DATA_DIR": filepath.Join(file, "data"),
	}), "", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(p); err == nil {
		t.Fatal("Apply into a path below a file: no error")
	}
}

func readFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s = %q, want %q", path, b, want)
	}
}
