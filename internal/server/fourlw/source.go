package fourlw

import "time"

// Source is what the four-letter words read from the server. Each method is
// called only by the commands that need it, so an expensive one (Dump walks
// every ephemeral) costs nothing for "ruok". Implementations must be safe to
// call from the connection's goroutine.
type Source interface {
	// Serving reports whether the server is serving requests; most
	// commands answer "This ZooKeeper instance is not currently serving
	// requests" when it is not.
	Serving() bool
	// Stats returns the server statistics shared by srvr, stat and mntr.
	Stats() Stats
	// Connections returns the open client connections (stat, cons).
	Connections() []Conn
	// Conf returns the effective configuration (conf, dirs).
	Conf() Conf
	// Env returns the environment lines printed by envi after
	// zookeeper.version, in order.
	Env() []KV
	// Monitor returns the values mntr prints beyond Stats.
	Monitor() Monitor
	// DataWatches returns the data watches held by this server's
	// connections (getData, exists and persistent watches: Apache's
	// dataWatches, which is all that wchs, wchc and wchp show).
	DataWatches() []Watch
	// WatchSummary counts the data watches (wchs). It must not cost what
	// DataWatches does: monitoring asks for it on servers with millions
	// of watches.
	WatchSummary() WatchSummary
	// Dump returns sessions, ephemerals and connection expiry (dump).
	Dump() Dump
	// TraceMask returns the trace mask (gtmk, stmk).
	TraceMask() int64
	// ResetConnectionStats resets every connection's statistics (crst).
	ResetConnectionStats()
	// ResetServerStats resets the server statistics (srst).
	ResetServerStats()
	// DigestLog returns the tree digests recorded as txns were applied,
	// oldest first (hash).
	DigestLog() []ZxidDigest
}

// ZxidDigest is the tree's digest (Apache's DigestCalculator) once the txn
// with zxid Zxid was applied.
type ZxidDigest struct {
	Zxid   int64
	Digest int64
}

// KV is one key=value line.
type KV struct {
	Key, Value string
}

// Mode values for Stats.Mode, as Apache's ServerStats reports them.
const (
	ModeStandalone = "standalone"
	ModeLeader     = "leader"
	ModeFollower   = "follower"
	ModeObserver   = "observer"
	ModeReadOnly   = "read-only"
)

// Stats is the server's view of itself (Apache's ServerStats).
type Stats struct {
	// Version is the full version string, e.g. FullVersion("3.9.2-zoo",
	// buildTime). Clients parse it: kazoo takes the leading digits and
	// dots of envi's zookeeper.version.
	Version  string
	Mode     string // one of the Mode constants
	ReadOnly bool   // prints Apache's READ-ONLY banner in srvr and stat
	Latency  Latency
	Received int64 // packets received
	Sent     int64 // packets sent
	// Connections is the number of live client connections.
	Connections int
	Outstanding int64 // requests received but not yet answered
	// SlowFsyncs counts log writes whose fsync took longer than
	// fsync.warningthresholdms.
	SlowFsyncs int64
	Zxid       int64 // last applied zxid
	NodeCount  int64
	// ProposalSizes is printed by srvr and stat on a leader only.
	ProposalSizes BufferStats
}

// Latency is a min/avg/max counter in milliseconds (Apache's
// AvgMinMaxCounter). The zero value prints as Apache's reset counter:
// 0/0.0/0.
type Latency struct {
	Count, Total, Min, Max int64
}

// Avg returns the mean rounded half-up to four decimals, as Apache's
// AvgMinMaxCounter.getAvg does.
func (l Latency) Avg() float64 { return avg4(l.Total, l.Count) }

// BufferStats is last/min/max of a size, -1 until the first sample
// (Apache's BufferStats).
type BufferStats struct {
	Last, Min, Max int64
}

// Conn is one client connection as cons and stat show it.
type Conn struct {
	// Remote is the peer address, "127.0.0.1:39838" or "[::1]:39838";
	// Apache prints it after a slash.
	Remote string
	// Interest is the selector interest set Apache prints in brackets:
	// 1 while reading, 0 for the connection running the command.
	Interest int
	Queued   int64 // outstanding requests
	Received int64 // packets received
	Sent     int64 // packets sent
	// SessionID is 0 before the session is established; cons then prints
	// only the packet counts.
	SessionID int64
	LastOp    string    // "NA" initially, then e.g. "PING", "GETD"
	Created   time.Time // when the connection was established
	Timeout   int32     // negotiated session timeout, ms
	// LastCxid is the last client xid seen, or -1 (after a reset): cons
	// then omits it.
	LastCxid int64
	LastZxid int64
	// LastResponse is when the last response was sent, in the server's
	// monotonic milliseconds, as Apache prints it.
	LastResponse int64
	// LastLatency, MinLatency, AvgLatency and MaxLatency are in ms;
	// Apache's per-connection average is an integer.
	LastLatency, MinLatency, AvgLatency, MaxLatency int64
}

// Conf is the configuration conf prints (Apache's ZooKeeperServer.dumpConf).
type Conf struct {
	ClientPort              int
	SecureClientPort        int // -1 when unset
	DataDir                 string
	DataDirSize             int64 // bytes of snapshots
	DataLogDir              string
	DataLogSize             int64 // bytes of logs
	TickTime                int
	MaxClientCnxns          int
	MinSessionTimeout       int
	MaxSessionTimeout       int
	ClientPortListenBacklog int // -1 when unset
	ServerID                int64
	// Quorum is set on a server in an ensemble; standalone servers print
	// no quorum section.
	Quorum *QuorumConf
}

// QuorumConf is what a quorum member adds to conf
// (QuorumZooKeeperServer.dumpConf).
type QuorumConf struct {
	InitLimit    int
	SyncLimit    int
	ElectionAlg  int // 3
	ElectionPort int
	QuorumPort   int
	PeerType     int // 0 participant, 1 observer
	// Members are the membership lines, "server.1=host:2888:3888:participant"
	// (with ";clientHost:port" when known), in id order.
	Members []string
	// Version is the configuration version, printed in hex.
	Version int64
}

// Monitor is what mntr prints beyond Stats. Fields marked leader or quorum
// are printed only in those roles, where Apache prints them.
type Monitor struct {
	PeerState           string // quorum: "leading - broadcast", "following - broadcast"
	ObserverMasterID    int64  // observer only: the server it syncs from
	EphemeralsCount     int64
	GlobalSessions      int64
	LocalSessions       int64
	WatchCount          int64 // data and child watches
	ApproximateDataSize int64
	OpenFileDescriptors int64
	MaxFileDescriptors  int64
	UptimeMs            int64
	AuthFailed          int64
	// ClientResponseSize is the size of responses sent.
	ClientResponseSize BufferStats
	// Quorum only.
	QuorumSize int
	// Leader only.
	Learners                 int
	SyncedFollowers          int
	SyncedNonVotingFollowers int
	SyncedObservers          int
	PendingSyncs             int
	LeaderUptimeMs           int64
	// Extra lines follow the standard ones in the order given; Apache
	// prints several hundred counters there (zk_proposal_count,
	// zk_stale_sessions_expired, ...). Keys are without the zk_ prefix.
	Extra []KV
}

// Watch is one data watch: a session watching a path.
type Watch struct {
	SessionID int64
	Path      string
}

// WatchSummary is what wchs prints: Apache's WatchManager.toString counts
// the connections with a data watch, the paths with one, and the
// (connection, path) pairs.
type WatchSummary struct {
	Connections, Paths, Total int
}

// Dump is what the dump command prints.
type Dump struct {
	// Location is the time zone the expiry times are printed in (Apache
	// uses the JVM's default zone). nil means UTC.
	Location *time.Location
	// On the leader (and standalone): the session expiry buckets.
	SessionBuckets []Bucket
	// On a follower or observer, which does not expire sessions, the
	// global sessions and their timeouts instead; set Global to select
	// this form.
	Global         bool
	GlobalSessions []SessionTimeout
	// Ephemerals maps each session owning ephemeral nodes to their paths.
	Ephemerals map[int64][]string
	// ConnectionBuckets is the connection expiry queue.
	ConnectionBuckets []ConnBucket
}

// Bucket is one session expiry bucket.
type Bucket struct {
	Expires    time.Time
	SessionIDs []int64
}

// SessionTimeout is a session and its timeout in ms.
type SessionTimeout struct {
	SessionID int64
	Timeout   int32
}

// ConnBucket is one connection expiry bucket.
type ConnBucket struct {
	Expires time.Time
	Conns   []ConnRef
}

// ConnRef names a connection in the dump.
type ConnRef struct {
	Remote    string
	SessionID int64
}
