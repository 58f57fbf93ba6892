package fourlw

import "time"

// fake is a Source whose answers are set field by field.
type fake struct {
	notServing  bool
	stats       Stats
	conns       []Conn
	conf        Conf
	env         []KV
	monitor     Monitor
	watches     []Watch
	dump        Dump
	traceMask   int64
	connResets  int
	statsResets int
	digests     []ZxidDigest
}

func (f *fake) Serving() bool           { return !f.notServing }
func (f *fake) Stats() Stats            { return f.stats }
func (f *fake) Connections() []Conn     { return f.conns }
func (f *fake) Conf() Conf              { return f.conf }
func (f *fake) Env() []KV               { return f.env }
func (f *fake) Monitor() Monitor        { return f.monitor }
func (f *fake) DataWatches() []Watch    { return f.watches }
func (f *fake) Dump() Dump              { return f.dump }
func (f *fake) TraceMask() int64        { return f.traceMask }
func (f *fake) ResetConnectionStats()   { f.connResets++ }
func (f *fake) ResetServerStats()       { f.statsResets++ }
func (f *fake) DigestLog() []ZxidDigest { return f.digests }

// apacheVersion is what the Debian build of Apache 3.8.0 reports.
const apacheVersion = "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC"

func ms(v int64) time.Time { return time.UnixMilli(v) }

// utcSecond parses a Java Date.toString in UTC, for dump buckets.
func utcSecond(s string) time.Time {
	t, err := time.Parse("Mon Jan 02 15:04:05 MST 2006", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Sessions and connections of the captures in testdata/apache.
const (
	sa0 = 0x10000052f3c0000 // standalone
	sa1 = 0x10000052f3c0001
	q0  = 0x10000087b910000 // ensemble, connected to server 1
	q1  = 0x10000087b910001
)

// apacheStandalone reproduces the standalone captures: three connections
// (two sessions and the one asking), two sessions with ephemerals, and
// four watches of which three are data watches.
func apacheStandalone() *fake {
	return &fake{
		stats: Stats{
			Version: apacheVersion, Mode: ModeStandalone,
			Latency:  Latency{Count: 64, Total: 29, Min: 0, Max: 5}, // 0.4531
			Received: 254, Sent: 255, Connections: 3, Zxid: 7, NodeCount: 10,
		},
		conns: []Conn{
			{Remote: "127.0.0.1:39838", Interest: 1, Received: 123, Sent: 123, SessionID: sa0, LastOp: "PING",
				Created: ms(1795241418201), Timeout: 10000, LastCxid: -1, LastZxid: 7, LastResponse: 738532, MaxLatency: 5},
			{Remote: "127.0.0.1:54080", Received: 1},
			{Remote: "127.0.0.1:39842", Interest: 1, Received: 123, Sent: 123, SessionID: sa1, LastOp: "PING",
				Created: ms(1795241418216), Timeout: 10000, LastCxid: -1, LastZxid: 7, LastResponse: 738959, MaxLatency: 4},
		},
		conf: Conf{
			ClientPort: 56931, SecureClientPort: -1,
			DataDir: "/tmp/zkoracle.N5P7/version-2", DataDirSize: 67109337,
			DataLogDir: "/tmp/zkoracle.N5P7/version-2", DataLogSize: 67109337,
			TickTime: 2000, MaxClientCnxns: 60, MinSessionTimeout: 4000, MaxSessionTimeout: 40000,
			ClientPortListenBacklog: -1, ServerID: 0,
		},
		env: []KV{
			{"host.name", "localhost"},
			{"java.version", "17.0.15"},
			{"java.vendor", "Debian"},
			{"java.home", "/usr/lib/jvm/java-17-openjdk-amd64"},
			{"java.class.path", "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-simple.jar"},
			{"java.library.path", "/usr/java/packages/lib:/usr/lib/x86_64-linux-gnu/jni:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/usr/lib/jni:/lib:/usr/lib"},
			{"java.io.tmpdir", "/tmp"},
			{"java.compiler", "<NA>"},
			{"os.name", "Linux"},
			{"os.arch", "amd64"},
			{"os.version", "6.18.44-fc-v669"},
			{"user.name", "root"},
			{"user.home", "/root"},
			{"user.dir", "/work/main"},
			{"os.memory.free", "375MB"},
			{"os.memory.max", "6028MB"},
			{"os.memory.total", "388MB"},
		},
		monitor: Monitor{
			EphemeralsCount: 3, GlobalSessions: 2, WatchCount: 4, ApproximateDataSize: 164,
			OpenFileDescriptors: 42, MaxFileDescriptors: 20000, UptimeMs: 400818,
			ClientResponseSize: BufferStats{Last: 16, Min: 16, Max: 16},
			Extra:              []KV{{"proposal_count", "0"}, {"watch_bytes", "0"}},
		},
		watches: []Watch{
			{sa1, "/nope"}, {sa0, "/a"}, {sa1, "/a/b"}, {sa1, "/nope"}, // duplicate on purpose
		},
		dump: Dump{
			SessionBuckets: []Bucket{
				{Expires: utcSecond("Sat Nov 21 06:16:54 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:16:56 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:17:00 UTC 2026"), SessionIDs: []int64{sa1, sa0}},
			},
			Ephemerals: map[int64][]string{sa1: {"/e3"}, sa0: {"/a/e2", "/a/e1"}},
			ConnectionBuckets: []ConnBucket{
				{Expires: utcSecond("Sat Nov 21 06:17:00 UTC 2026"), Conns: []ConnRef{
					{"127.0.0.1:39838", sa0}, {"127.0.0.1:39842", sa1},
				}},
				{Expires: utcSecond("Sat Nov 21 06:17:10 UTC 2026"), Conns: []ConnRef{{"127.0.0.1:54132", 0}}},
			},
		},
		traceMask: 498,
	}
}

// apacheFollower reproduces the captures from server 1 of the ensemble.
func apacheFollower() *fake {
	return &fake{
		stats: Stats{
			Version: apacheVersion, Mode: ModeFollower,
			Latency:  Latency{Count: 1000, Total: 873, Max: 9}, // 0.873
			Received: 76, Sent: 79, Connections: 3, Zxid: 0x10000000b, NodeCount: 11,
		},
		conns: []Conn{
			{Remote: "127.0.0.1:60344", Interest: 1, Received: 35, Sent: 35, SessionID: q0, LastOp: "PING",
				Created: ms(1795241733239), Timeout: 10000, LastCxid: 9, LastZxid: 0x10000000b, LastResponse: 740980,
				LastLatency: 2, AvgLatency: 1, MaxLatency: 9},
			{Remote: "127.0.0.1:42182", Received: 1},
			{Remote: "127.0.0.1:60350", Interest: 1, Received: 28, Sent: 28, SessionID: q1, LastOp: "PING",
				Created: ms(1795241733257), Timeout: 10000, LastCxid: 3, LastZxid: 0x10000000b, LastResponse: 739468,
				MaxLatency: 4},
		},
		monitor: Monitor{
			PeerState: "following - broadcast", EphemeralsCount: 3, GlobalSessions: 2, WatchCount: 4,
			ApproximateDataSize: 324, OpenFileDescriptors: 46, MaxFileDescriptors: 20000, UptimeMs: 186089,
			ClientResponseSize: BufferStats{Last: 16, Min: 16, Max: 88}, QuorumSize: 3,
			Extra: []KV{{"proposal_count", "0"}, {"watch_bytes", "0"}},
		},
		dump: Dump{
			Global:         true,
			GlobalSessions: []SessionTimeout{{q1, 10000}, {q0, 10000}},
			Ephemerals:     map[int64][]string{q1: {"/e3"}, q0: {"/a/e2", "/a/e1"}},
			ConnectionBuckets: []ConnBucket{
				{Expires: utcSecond("Sat Nov 21 06:17:00 UTC 2026"), Conns: []ConnRef{{"127.0.0.1:60350", q1}}},
				{Expires: utcSecond("Sat Nov 21 06:17:10 UTC 2026"), Conns: []ConnRef{
					{"127.0.0.1:60344", q0}, {"127.0.0.1:42166", 0},
				}},
			},
		},
	}
}

// apacheLeader reproduces the captures from server 3, the leader.
func apacheLeader() *fake {
	return &fake{
		stats: Stats{
			Version: apacheVersion, Mode: ModeLeader,
			Latency:  Latency{Count: 2, Total: 13, Min: 3, Max: 9}, // 6.5
			Received: 17, Sent: 22, Connections: 1, Zxid: 0x10000000b, NodeCount: 11,
			ProposalSizes: BufferStats{Last: 87, Min: 48, Max: 189},
		},
		conns: []Conn{{Remote: "127.0.0.1:36372", Received: 1}},
		conf: Conf{
			ClientPort: 57871, SecureClientPort: -1,
			DataDir: "/tmp/zkens.7gw5/s3/version-2", DataDirSize: 67109493,
			DataLogDir: "/tmp/zkens.7gw5/s3/version-2", DataLogSize: 67109493,
			TickTime: 2000, MaxClientCnxns: 60, MinSessionTimeout: 4000, MaxSessionTimeout: 40000,
			ClientPortListenBacklog: -1, ServerID: 3,
			Quorum: &QuorumConf{
				InitLimit: 5, SyncLimit: 2, ElectionAlg: 3, ElectionPort: 54799, QuorumPort: 46783,
				Members: []string{
					"server.1=127.0.0.1:51129:52519:participant",
					"server.2=127.0.0.1:42991:35785:participant",
					"server.3=127.0.0.1:46783:54799:participant;127.0.0.1:57871",
				},
			},
		},
		monitor: Monitor{
			PeerState: "leading - broadcast", EphemeralsCount: 3, GlobalSessions: 2,
			ApproximateDataSize: 324, OpenFileDescriptors: 46, MaxFileDescriptors: 20000,
			UptimeMs: 185974, ClientResponseSize: BufferStats{Last: 16, Min: 16, Max: 84}, QuorumSize: 3,
			Learners: 2, SyncedFollowers: 2, LeaderUptimeMs: 185762,
			Extra: []KV{{"proposal_count", "11"}, {"watch_bytes", "0"}},
		},
		dump: Dump{
			SessionBuckets: []Bucket{
				{Expires: utcSecond("Sat Nov 21 06:16:52 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:16:54 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:16:56 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:16:58 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:17:00 UTC 2026")},
				{Expires: utcSecond("Sat Nov 21 06:17:02 UTC 2026"), SessionIDs: []int64{q1, q0}},
			},
			Ephemerals: map[int64][]string{q1: {"/e3"}, q0: {"/a/e2", "/a/e1"}},
			ConnectionBuckets: []ConnBucket{
				{Expires: utcSecond("Sat Nov 21 06:17:10 UTC 2026"), Conns: []ConnRef{{"127.0.0.1:36396", 0}}},
			},
		},
	}
}

// WatchSummary counts f.watches as Apache's WatchManager does: by
// connection (here, session) and path.
func (f *fake) WatchSummary() WatchSummary {
	ws := dedupWatches(f.watches)
	sessions, paths := map[int64]bool{}, map[string]bool{}
	for _, w := range ws {
		sessions[w.SessionID], paths[w.Path] = true, true
	}
	return WatchSummary{Connections: len(sessions), Paths: len(paths), Total: len(ws)}
}
