package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// check runs Parse, EnsureDefaults and Validate, as Load does without the
// file system, and returns the configuration and every problem.
func check(t *testing.T, text string) (*Config, error) {
	t.Helper()
	c, perr := Parse("zoo.cfg", []byte(text))
	c.EnsureDefaults()
	return c, Join(perr, c.Validate())
}

func mustCheck(t *testing.T, text string) *Config {
	t.Helper()
	c, err := check(t, text)
	if err != nil {
		t.Fatalf("unexpected problems:\n%v", err)
	}
	return c
}

func TestParseApacheSample(t *testing.T) {
	// conf/zoo_sample.cfg from the Apache distribution.
	c := mustCheck(t, `# The number of milliseconds of each tick
tickTime=2000
# The number of ticks that the initial
# synchronization phase can take
initLimit=10
syncLimit=5
dataDir=/tmp/zookeeper
# the port at which the clients will connect
clientPort=2181
#maxClientCnxns=60
#autopurge.snapRetainCount=3
#autopurge.purgeInterval=1
## Metrics Providers
#metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
#metricsProvider.httpPort=7000
#metricsProvider.exportJvmInfo=true
`)
	want := map[string]any{
		"TickTime": 2000, "InitLimit": 10, "SyncLimit": 5, "DataDir": "/tmp/zookeeper",
		"DataLogDir": "/tmp/zookeeper", "ClientPort": 2181, "ClientPortAddress": "",
		"MaxClientCnxns": 60, "MinSessionTimeout": 4000, "MaxSessionTimeout": 40000,
		"SnapRetainCount": 3, "PurgeInterval": 0, "SnapCount": 100000, "Distributed": false,
		"ClientAddr": ":2181", "JuteMaxBuffer": 0xfffff, "JuteMaxBufferExtraSize": 0xfffff,
		"FourLetterWords": []string(nil), "AdminEnableServer": true, "AdminAddr": "0.0.0.0:8080",
		"Warnings": 0,
	}
	compare(t, c, want)
}

// compare checks the named fields of c.
func compare(t *testing.T, c *Config, want map[string]any) {
	t.Helper()
	got := map[string]any{
		"TickTime": c.TickTime, "InitLimit": c.InitLimit, "SyncLimit": c.SyncLimit, "DataDir": c.DataDir,
		"DataLogDir": c.DataLogDir, "ClientPort": c.ClientPort, "ClientPortAddress": c.ClientPortAddress,
		"MaxClientCnxns": c.MaxClientCnxns, "MinSessionTimeout": c.MinSessionTimeout,
		"MaxSessionTimeout": c.MaxSessionTimeout, "SnapRetainCount": c.SnapRetainCount,
		"PurgeInterval": c.PurgeInterval, "SnapCount": c.SnapCount, "CommitLogCount": c.CommitLogCount, "Distributed": c.Distributed(),
		"ClientAddr": c.ClientAddr(), "JuteMaxBuffer": c.JuteMaxBuffer,
		"JuteMaxBufferExtraSize": c.JuteMaxBufferExtraSize, "FourLetterWords": c.FourLetterWords,
		"AdminEnableServer": c.AdminEnableServer, "AdminAddr": c.AdminAddr(), "Warnings": len(c.Warnings),
		"MyID": c.MyID, "PeerType": c.PeerType, "ExtendedTypesEnabled": c.ExtendedTypesEnabled,
		"StandaloneEnabled": c.StandaloneEnabled, "ReconfigEnabled": c.ReconfigEnabled,
		"SuperDigest": c.SuperDigest, "ForceSync": c.ForceSync, "MaxCnxns": c.MaxCnxns,
		"GlobalOutstandingLimit": c.GlobalOutstandingLimit, "PreAllocSizeKB": c.PreAllocSizeKB,
		"FsyncWarningThresholdMs": c.FsyncWarningThresholdMs,
		"SnapshotCompression":     c.SnapshotCompression, "ContainerCheckInterval": c.ContainerCheckInterval,
		"ContainerMaxPerMinute": c.ContainerMaxPerMinute, "SyncEnabled": c.SyncEnabled,
		"QuorumListenOnAllIPs": c.QuorumListenOnAllIPs, "ElectionAlg": c.ElectionAlg,
		"DynamicConfigFile": c.DynamicConfigFile, "ConfigVersion": c.ConfigVersion, "SkipACL": c.SkipACL,
		"ClientPortListenBacklog": c.ClientPortListenBacklog, "AdminIdleTimeout": c.AdminIdleTimeout,
		"AdminCommandURL": c.AdminCommandURL, "MetricsProviderClassName": c.MetricsProviderClassName,
		"MetricsProvider": fmt.Sprint(c.MetricsProvider), "Servers": len(c.Servers),
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("compare: unknown field %s", k)
			continue
		}
		if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
			t.Errorf("%s = %#v, want %#v", k, g, w)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	// Ref: Apache 3.8 QuorumPeerConfig with only dataDir and clientPort:
	// tickTime 3000, min 6000, max 60000, maxClientCnxns 60 (probed).
	c := mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	compare(t, c, map[string]any{
		"TickTime": 3000, "MinSessionTimeout": 6000, "MaxSessionTimeout": 60000, "MaxClientCnxns": 60,
		"ClientPortListenBacklog": -1, "ForceSync": true, "SyncEnabled": true, "StandaloneEnabled": true,
		"GlobalOutstandingLimit": 1000, "PreAllocSizeKB": int64(65536), "ContainerCheckInterval": 60000,
		"FsyncWarningThresholdMs": int64(1000),
		"ContainerMaxPerMinute":   10000, "ElectionAlg": 3, "AdminIdleTimeout": 30000,
		"AdminCommandURL": "/commands", "SnapshotCompression": "",
	})
}

func TestParseEveryKey(t *testing.T) {
	c := mustCheck(t, `tickTime = 500
initLimit = 4
syncLimit = 3
dataDir = /data
dataLogDir = /log
clientPort = 2191
clientPortAddress = 127.0.0.1
maxClientCnxns = 0
maxCnxns = 500
minSessionTimeout = 1000
maxSessionTimeout = 9000
clientPortListenBacklog = 128
autopurge.snapRetainCount = 5
autopurge.purgeInterval = 24
snapCount = 5000
commitLogCount = 500
preAllocSize = 1024
fsync.warningthresholdms = 250
forceSync = no
snapshot.compression.method = gz
globalOutstandingLimit = 10
jute.maxbuffer = 0x400000
jute.maxbuffer.extrasize = 2048
4lw.commands.whitelist = srvr, ruok,mntr ,
admin.enableServer = false
admin.serverAddress = 127.0.0.2
admin.serverPort = 9090
admin.idleTimeout = 1000
admin.commandURL = /cmds
reconfigEnabled = true
standaloneEnabled = TRUE
extendedTypesEnabled = true
znode.container.checkIntervalMs = 1000
znode.container.maxPerMinute = 7
DigestAuthenticationProvider.superDigest = super:D/InIHSb7yEEbrWz8b9l71RjZJU=
dynamicConfigFile = /conf/zoo.cfg.dynamic.100000000
syncEnabled = false
quorumListenOnAllIPs = true
electionAlg = 3
skipACL = yes
metricsProvider.className = org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpPort = 7000
`)
	compare(t, c, map[string]any{
		"TickTime": 500, "InitLimit": 4, "SyncLimit": 3, "DataDir": "/data", "DataLogDir": "/log",
		"ClientAddr": "127.0.0.1:2191", "MaxClientCnxns": 0, "MaxCnxns": 500, "MinSessionTimeout": 1000,
		"MaxSessionTimeout": 9000, "ClientPortListenBacklog": 128, "SnapRetainCount": 5, "PurgeInterval": 24,
		"SnapCount": 5000, "CommitLogCount": 500, "PreAllocSizeKB": int64(1024), "FsyncWarningThresholdMs": int64(250), "ForceSync": false, "SnapshotCompression": "gz",
		"GlobalOutstandingLimit": 10, "JuteMaxBuffer": 0x400000, "JuteMaxBufferExtraSize": 2048,
		"FourLetterWords": []string{"srvr", "ruok", "mntr"}, "AdminEnableServer": false,
		"AdminAddr": "127.0.0.2:9090", "AdminIdleTimeout": 1000, "AdminCommandURL": "/cmds",
		"ReconfigEnabled": true, "StandaloneEnabled": true, "ExtendedTypesEnabled": true,
		"ContainerCheckInterval": 1000, "ContainerMaxPerMinute": 7,
		"SuperDigest":       "super:D/InIHSb7yEEbrWz8b9l71RjZJU=",
		"DynamicConfigFile": "/conf/zoo.cfg.dynamic.100000000", "SyncEnabled": false,
		"QuorumListenOnAllIPs": true, "ElectionAlg": 3, "SkipACL": true,
		"MetricsProviderClassName": "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider",
		"MetricsProvider":          "map[httpPort:7000]", "Warnings": 0,
	})
}

func TestParseEnsemble(t *testing.T) {
	c, perr := Parse("zoo.cfg", []byte(`dataDir=/d
initLimit=5
syncLimit=2
server.3=h3:2890:3890:observer;2183
server.1=h1:2888:3888
server.2=[::1]:2889:3889;[::2]:2182
`))
	if perr != nil {
		t.Fatal(perr)
	}
	c.MyID = 2
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ids := []int64{}
	for _, s := range c.Servers {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Fatalf("server ids %v, want sorted 1 2 3", ids)
	}
	if c.Servers[2].Pos != (Pos{"zoo.cfg", 4}) {
		t.Errorf("server.3 at %v", c.Servers[2].Pos)
	}
	// Ref: Apache setupClientPort: this server's line gives the client
	// address when there is no clientPort.
	compare(t, c, map[string]any{"Distributed": true, "ClientAddr": "[::2]:2182", "PeerType": Participant, "Servers": 3})
	if c.Voters() != 2 {
		t.Errorf("Voters = %d", c.Voters())
	}
}

func TestParseWarnings(t *testing.T) {
	c := mustCheck(t, `dataDir=/d
clientPort=2181
localSessionsEnabled=true
netty.server.outstandingHandshake.limit=5
ticktime=2000
fooBar=1
autopurge.snapRetainCount=1
snapCount=1
clientPort=2182
jute.maxbuffer.extrasize=10
minSessionTimeout=0
extendedTypesEnabled=yes
snapshot.compression.method=lz4
group.1=1:2
tcpKeepAlive=true
`)
	want := []string{
		"zoo.cfg:2: clientPort: set again on line 9, which wins",
		"zoo.cfg:3: localSessionsEnabled: sessions are global in Zoo; local sessions are given only by a read-only member (readonlymode.enabled)",
		"zoo.cfg:4: netty.server.outstandingHandshake.limit: not supported by Zoo; ignored",
		"zoo.cfg:5: ticktime: unknown setting; ignored (did you mean tickTime?)",
		"zoo.cfg:6: fooBar: unknown setting; ignored",
		"zoo.cfg:7: autopurge.snapRetainCount: 1 is below the minimum; using 3",
		"zoo.cfg:8: snapCount: 1 is below the minimum; using 2",
		"zoo.cfg:10: jute.maxbuffer.extrasize: 10 is below the minimum; using 1024",
		"zoo.cfg:11: minSessionTimeout: 0 means the default, 2 ticks",
		`zoo.cfg:12: extendedTypesEnabled: "yes" is not true or false; read as false, as Apache does`,
		`zoo.cfg:13: snapshot.compression.method: unknown method "lz4"; snapshots are not compressed, as in Apache`,
		"zoo.cfg:14: group.1: hierarchical quorums are not supported; Zoo uses a plain majority of the participants",
		"zoo.cfg:15: tcpKeepAlive: not supported by Zoo; ignored",
	}
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]WarningKind{"localSessionsEnabled": Unsupported, "fooBar": Unknown, "clientPort": Duplicate, "snapCount": Adjusted}
	for _, w := range c.Warnings {
		if k, ok := kinds[w.Key]; ok && w.Kind != k {
			t.Errorf("%s: kind %v, want %v", w.Key, w.Kind, k)
		}
	}
	compare(t, c, map[string]any{"ClientPort": 2182, "SnapRetainCount": 3, "SnapCount": 2, "MinSessionTimeout": 6000,
		"JuteMaxBufferExtraSize": 1024, "ExtendedTypesEnabled": false})
}

func TestParseReportsEveryProblem(t *testing.T) {
	// Ref: STYLE pattern 9: report every problem, each with file:line.
	_, err := check(t, `tickTime=abc
dataDir=
clientPort=99999
initLimit=-1
standaloneEnabled=maybe
server.1=h1:2888
server.x=h:1:2
electionAlg=1
peerType=spectator
a=\u12
forceSync=perhaps
jute.maxbuffer=0
version=xyz
DigestAuthenticationProvider.superDigest=nocolon
server.2=h2:1:2
server.02=h2:3:4
`)
	want := []struct {
		line     int
		key      string
		sentinel error
	}{
		{1, "tickTime", ErrInvalid},
		{2, "dataDir", ErrInvalid},
		{3, "clientPort", ErrInvalid},
		{4, "initLimit", ErrInvalid},
		{5, "standaloneEnabled", ErrInvalid},
		{6, "server.1", ErrInvalid},
		{7, "server.x", ErrInvalid},
		{8, "electionAlg", ErrInvalid},
		{9, "peerType", ErrInvalid},
		{10, "", ErrSyntax},
		{11, "forceSync", ErrInvalid},
		{12, "jute.maxbuffer", ErrInvalid},
		{13, "version", ErrInvalid},
		{14, "DigestAuthenticationProvider.superDigest", ErrInvalid},
		{16, "server.02", ErrConflict},
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T is not Problems: %v", err, err)
	}
	// Parse problems come in file order; Validate's (none expected here
	// beyond the parse failures, which it must not repeat) follow.
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for i, w := range want {
		p := ps[i]
		if p.Pos != (Pos{"zoo.cfg", w.line}) || p.Key != w.key || !errors.Is(p, w.sentinel) {
			t.Errorf("problem %d = %v (%v); want line %d key %q %v", i, p, p.Pos, w.line, w.key, w.sentinel)
		}
		if !strings.HasPrefix(p.Error(), fmt.Sprintf("zoo.cfg:%d: ", w.line)) {
			t.Errorf("problem %d message %q lacks file:line", i, p.Error())
		}
	}
	for _, s := range []error{ErrInvalid, ErrSyntax, ErrConflict} {
		if !errors.Is(err, s) {
			t.Errorf("errors.Is(err, %v) = false", s)
		}
	}
}

func TestValidate(t *testing.T) {
	const ens = "dataDir=/d\nclientPort=2181\ninitLimit=5\nsyncLimit=2\nserver.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888\n"
	tests := []struct {
		name     string
		cfg      string
		myid     int64
		pos      string // file:line of the first problem
		sentinel error
		msg      string
	}{
		{"missing dataDir", "clientPort=2181\n", 0, "zoo.cfg", ErrMissing, "dataDir is not set"},
		{"no client port", "dataDir=/d\n", 0, "zoo.cfg", ErrMissing, "no client port"},
		{"address without port", "dataDir=/d\nclientPortAddress=1.2.3.4\n", 0, "zoo.cfg:2", ErrMissing,
			"clientPortAddress is set but clientPort is not"},
		{"min above max", "dataDir=/d\nclientPort=1\nminSessionTimeout=5000\nmaxSessionTimeout=4000\n", 0, "zoo.cfg:4",
			ErrConflict, "minSessionTimeout 5000 is larger than maxSessionTimeout 4000"},
		{"min above derived max", "dataDir=/d\nclientPort=1\ntickTime=100\nminSessionTimeout=5000\n", 0, "zoo.cfg",
			ErrConflict, "larger than maxSessionTimeout 2000"},
		{"ensemble without myid", ens, 0, "zoo.cfg", ErrMissing, "myid file is missing"},
		{"myid not listed", ens, 4, "zoo.cfg", ErrConflict, "no server.4 line"},
		{"ensemble without initLimit", strings.Replace(ens, "initLimit=5\n", "", 1), 1, "zoo.cfg", ErrMissing,
			"initLimit is not set"},
		{"ensemble without syncLimit", strings.Replace(ens, "syncLimit=2\n", "", 1), 1, "zoo.cfg", ErrMissing,
			"syncLimit is not set"},
		{"observers only", "dataDir=/d\nclientPort=1\nserver.1=h:1:2:observer\n", 0, "zoo.cfg:3", ErrConflict,
			"observers without participants"},
		{"observer without quorum", "dataDir=/d\nclientPort=1\nserver.1=h:1:2\nserver.2=h:3:4:observer\n", 0,
			"zoo.cfg:3", ErrConflict, "observers without a quorum"},
		{"standalone disabled, no participants", "dataDir=/d\nclientPort=1\nstandaloneEnabled=false\nserver.1=h:1:2:observer\n",
			0, "zoo.cfg:3", ErrConflict, "needs at least one participant"},
		{"server id too large", ens + "server.256=h4:2888:3888\n", 1, "zoo.cfg:8", ErrInvalid, "out of range 1-255"},
		{"server id 255 with TTL", ens + "extendedTypesEnabled=true\nserver.255=h4:2888:3888\n", 1, "zoo.cfg:9", ErrInvalid,
			"out of range 1-254"},
		{"server id 0", ens + "server.0=h4:2888:3888\n", 1, "zoo.cfg:8", ErrInvalid, "out of range"},
		{"duplicate address", ens + "server.4=h1:2888:3999\n", 1, "zoo.cfg:8", ErrConflict,
			"address h1:2888 is also used by server.1 (zoo.cfg:5)"},
		{"client port disagrees", strings.Replace(ens, "server.1=h1:2888:3888", "server.1=h1:2888:3888;2182", 1), 1,
			"zoo.cfg:2", ErrConflict, "differs from 0.0.0.0:2182 on server.1"},
		{"client host disagrees", strings.Replace(ens, "clientPort=2181", "clientPort=2181\nclientPortAddress=10.0.0.1", 1) +
			"", 1, "", nil, ""}, // no server line with a client part: fine
		{"client host disagrees with line", strings.Replace(strings.Replace(ens, "clientPort=2181", "clientPort=2181\nclientPortAddress=10.0.0.1", 1),
			"server.1=h1:2888:3888", "server.1=h1:2888:3888;10.0.0.2:2181", 1), 1, "zoo.cfg:2", ErrConflict, "differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, perr := Parse("zoo.cfg", []byte(tt.cfg))
			if perr != nil {
				t.Fatal(perr)
			}
			c.MyID = tt.myid
			c.EnsureDefaults()
			err := c.Validate()
			if tt.sentinel == nil {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Validate = %v, want a problem", err)
			}
			p := ps[0]
			if p.Pos.String() != tt.pos || !errors.Is(p, tt.sentinel) || !strings.Contains(p.Error(), tt.msg) {
				t.Fatalf("first problem %q at %v; want %v at %s containing %q", p.Error(), p.Pos, tt.sentinel, tt.pos, tt.msg)
			}
		})
	}
}

func TestSingleServerLineIsStandalone(t *testing.T) {
	// Ref: Apache 3.8 logs "Invalid configuration, only one server
	// specified (ignoring)" and runs standalone.
	c := mustCheck(t, "dataDir=/d\nclientPort=2181\nserver.1=h1:2888:3888\n")
	if c.Distributed() {
		t.Fatal("one server line made the configuration distributed")
	}
	c.EnsureDefaults() // idempotent: the warning is not repeated
	if len(c.Warnings) != 1 || c.Warnings[0].Kind != Adjusted || c.Warnings[0].Pos.Line != 3 {
		t.Fatalf("warnings %v", c.Warnings)
	}
	// With standaloneEnabled=false, one server is an ensemble of one.
	c, err := check(t, "dataDir=/d\nclientPort=2181\nstandaloneEnabled=false\ninitLimit=1\nsyncLimit=1\nserver.1=h1:2888:3888\n")
	if !c.Distributed() || !errors.Is(err, ErrMissing) { // no myid
		t.Fatalf("distributed %v, err %v", c.Distributed(), err)
	}
}

func TestPeerTypeFollowsServerLine(t *testing.T) {
	c, _ := Parse("zoo.cfg", []byte("dataDir=/d\nclientPort=1\ninitLimit=1\nsyncLimit=1\npeerType=participant\n"+
		"server.1=h:1:2\nserver.2=h:3:4\nserver.3=h:5:6:observer\n"))
	c.MyID = 3
	c.EnsureDefaults()
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.PeerType != Observer || len(c.Warnings) != 1 || c.Warnings[0].Key != "peerType" {
		t.Fatalf("PeerType %v warnings %v", c.PeerType, c.Warnings)
	}
}

func TestDynamicServersInStaticFile(t *testing.T) {
	// Ref: Apache: "parameter: server.1 must be in a separate dynamic
	// config file" when dynamicConfigFile is set.
	_, err := Parse("zoo.cfg", []byte("server.1=h:1:2\ndataDir=/d\ndynamicConfigFile=/x\n"))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Key != "server.1" || !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v", err)
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	compare(t, c, map[string]any{
		"ClientAddr": "127.0.0.1:2181", "DataDir": "./zoo-data", "DataLogDir": "./zoo-data", "TickTime": 3000,
		"MinSessionTimeout": 6000, "MaxSessionTimeout": 60000, "Distributed": false, "MaxClientCnxns": 60,
		"AdminAddr": "127.0.0.1:8080", "Warnings": 0,
	})
}

func TestParseJavaDecode(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1048575", 1048575, true}, {"0xfffff", 0xfffff, true}, {"0XFF", 255, true}, {"#10", 16, true},
		{"010", 8, true}, {"0", 0, true}, {"-5", -5, true}, {"+7", 7, true},
		{"0x", 0, false}, {"abc", 0, false}, {"", 0, false}, {"--1", 0, false}, {"0x-1", 0, false},
		{"4294967296", 0, false},
	}
	for _, tt := range tests {
		got, err := parseJavaDecode(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseJavaDecode(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// Ref: Apache 3.8, a 3-participant + 1-observer ensemble from a static
// zoo.cfg: get /zookeeper/config returns these lines (checked against
// QuorumPeerMain on 2026-11-21), client addresses only where a line has one.
func TestMembership(t *testing.T) {
	c, perr := Parse("zoo.cfg", []byte(`dataDir=/d
clientPort=2181
server.2=127.0.0.1:40451:53343
server.1=127.0.0.1:52417:53297
server.3=127.0.0.1:37637:40337;127.0.0.1:2183
server.4=127.0.0.1:47109:49573:observer
`))
	if perr != nil {
		t.Fatal(perr)
	}
	want := "server.1=127.0.0.1:52417:53297:participant\n" +
		"server.2=127.0.0.1:40451:53343:participant\n" +
		"server.3=127.0.0.1:37637:40337:participant;127.0.0.1:2183\n" +
		"server.4=127.0.0.1:47109:49573:observer\n" +
		"version=0"
	if got := c.Membership(); got != want {
		t.Errorf("Membership:\n%s\nwant:\n%s", got, want)
	}
	c.ConfigVersion = 0x100000000
	if got := c.Membership(); !strings.HasSuffix(got, "\nversion=100000000") {
		t.Errorf("Membership with a version ends %q", got[strings.LastIndex(got, "\n"):])
	}
}
