// Package config reads Apache ZooKeeper's zoo.cfg and myid into a Config.
//
// zoo.cfg is a Java properties file. Parse reads it the way Apache 3.8's
// QuorumPeerConfig does (keys and values trimmed; the last of a duplicated
// key wins; server.N lines parsed as QuorumPeer.QuorumServer) and reports
// every problem at once, each with its file:line. Keys that Apache knows but
// Zoo does not implement, and keys nobody knows, become warnings rather than
// errors, so a server given a configuration written for Apache starts and
// says what it ignored.
//
// The usual sequence is Parse, EnsureDefaults, Validate; Load does all three
// for a file (and reads the myid file and a dynamic configuration file).
// Parse, EnsureDefaults and Validate are pure; only Load and LoadMyID touch
// the file system.
package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// DefaultSnapSizeLimitKB is Apache's snapSizeLimitInKb default, 4 GiB
// (ZooKeeperServer.getSnapSizeInBytes).
const DefaultSnapSizeLimitKB = 4194304

// Apache ZooKeeper 3.8's defaults.
const (
	DefaultTickTime                = 3000 // ms (ZooKeeperServer.DEFAULT_TICK_TIME; 2000 in sample configs)
	DefaultMaxClientCnxns          = 60
	DefaultSnapRetainCount         = 3 // also the minimum
	DefaultSnapCount               = 100000
	DefaultPreAllocSizeKB          = 65536 // 64 MiB
	DefaultFsyncWarningThresholdMs = 1000
	DefaultGlobalOutstandingLimit  = 1000
	DefaultJuteMaxBuffer           = 0xfffff // 1 MiB - 1
	MinJuteMaxBufferExtraSize      = 1024
	DefaultContainerCheckInterval  = 60000 // ms
	DefaultContainerMaxPerMinute   = 10000
	DefaultAdminServerAddress      = "0.0.0.0"
	DefaultAdminServerPort         = 8080
	DefaultAdminIdleTimeout        = 30000 // ms
	DefaultAdminCommandURL         = "/commands"
	DefaultElectionAlg             = 3
	DefaultClientPort              = 2181
)

// DefaultAdminRateLimiterInterval is Apache's admin.rateLimiterIntervalInMS
// (ms): one snapshot command per five minutes.
const DefaultAdminRateLimiterInterval = 300000

// Config is a server's configuration. A zero Config is not Apache's
// defaults: start from Default() or Parse, which set the defaults whose zero
// value means something else (MaxClientCnxns, where 0 means unlimited, and
// the booleans that default to true). EnsureDefaults fills the rest.
type Config struct {
	TickTime  int // ms; the session expiry bucket width and raft tick
	InitLimit int // ticks a follower may take to connect and sync
	SyncLimit int // ticks a follower may lag

	DataDir    string // snapshots (and myid)
	DataLogDir string // the log; defaults to DataDir

	ClientPort        int    // 0 if only given by this server's server.N line
	ClientPortAddress string // "" means all interfaces
	// MaxClientCnxns limits connections per client IP; 0 is unlimited.
	MaxClientCnxns int
	// MaxCnxns limits all client connections (zookeeper.maxCnxns); 0 is
	// unlimited.
	MaxCnxns                int
	MinSessionTimeout       int // ms; default 2 ticks
	MaxSessionTimeout       int // ms; default 20 ticks
	ClientPortListenBacklog int // -1 (or 0): the OS default

	// Servers are the server.N lines in id order; none (or a single
	// participant) means standalone.
	Servers []Server
	// MyID is this server's id from the myid file; 0 if there is none.
	MyID int64
	// PeerType is the peerType key. The role in Servers wins if they
	// differ (with a warning), as in Apache.
	PeerType          LearnerType
	StandaloneEnabled bool // default true
	ReconfigEnabled   bool
	DynamicConfigFile string
	// ConfigVersion is the "version" key of the dynamic configuration
	// (hex), 0 if absent.
	ConfigVersion        int64
	ElectionAlg          int // only 3 exists
	QuorumListenOnAllIPs bool
	SyncEnabled          bool // observers log and snapshot; default true

	SnapRetainCount int // autopurge.snapRetainCount, at least 3
	PurgeInterval   int // autopurge.purgeInterval in hours; 0 disables
	SnapCount       int // txns between snapshots
	// SnapSizeLimitKB is snapSizeLimitInKb: KiB of log after which a
	// snapshot is taken whatever snapCount says; -1 when set to 0 or
	// less, which turns it off as in Apache.
	SnapSizeLimitKB int64
	// CommitLogCount is how many committed txns the leader keeps in
	// memory behind its snapshot for followers that lag (commitLogCount,
	// Apache's zookeeper.commitLogCount); 0 is Zoo's default, 10000.
	CommitLogCount int
	PreAllocSizeKB int64
	// FsyncWarningThresholdMs is fsync.warningthresholdms: a log write
	// whose fsync takes longer is logged and counted
	// (fsync_threshold_exceed_count).
	FsyncWarningThresholdMs int64
	ForceSync               bool   // fsync the log; default true
	SnapshotCompression     string // snapshot.compression.method: "", "gz" or "snappy"
	// GCPercent is gcPercent, Zoo's own key: a fixed GOGC for the server
	// process. 0 (the default) lets Zoo choose it from the live heap so
	// that RSS stays near the live heap (cmd/zoo gc.go). The GOGC and
	// GOMEMLIMIT environment variables win over both.
	GCPercent int

	GlobalOutstandingLimit int
	// JuteMaxBuffer is the largest frame and znode payload, in bytes.
	JuteMaxBuffer int
	// JuteMaxBufferExtraSize is the slack the server allows on top of
	// JuteMaxBuffer for what it adds to a request (3.5.7+); 0 means the
	// same as JuteMaxBuffer, and it is never below 1024.
	JuteMaxBufferExtraSize int

	// FourLetterWords are the 4lw.commands.whitelist entries; nil means
	// Apache's default, "srvr" alone. "*" enables all.
	FourLetterWords []string

	// ReadOnlyMode is -Dreadonlymode.enabled (a system property only, as
	// in Apache): a member cut off from the quorum serves read-only
	// clients.
	ReadOnlyMode bool
	// LocalSessionsEnabled is localSessionsEnabled: a read-only member
	// gives new sessions as local sessions.
	LocalSessionsEnabled bool

	AdminEnableServer  bool // default true
	AdminServerAddress string
	AdminServerPort    int
	AdminIdleTimeout   int // ms
	AdminCommandURL    string
	// AdminRateLimiterInterval is admin.rateLimiterIntervalInMS, the least
	// time (ms) between two snapshot commands.
	AdminRateLimiterInterval int
	// AdminSnapshotDisabled is admin.snapshot.enabled=false: the snapshot
	// command answers 503.
	AdminSnapshotDisabled bool
	// AdminRestoreDisabled is admin.restore.enabled=false: the restore
	// command answers 503, as Apache's with zookeeper.admin.restore.enabled=false.
	AdminRestoreDisabled bool

	ExtendedTypesEnabled   bool // TTL nodes
	ContainerCheckInterval int  // znode.container.checkIntervalMs
	ContainerMaxPerMinute  int  // znode.container.maxPerMinute
	// SuperDigest is DigestAuthenticationProvider.superDigest,
	// "super:<base64 sha1>", or "".
	SuperDigest string
	SkipACL     bool // zookeeper.skipACL=yes
	// EnforceQuota makes hard quota limits fail requests with
	// QuotaExceeded (zookeeper.enforceQuota); soft limits are only logged.
	EnforceQuota bool

	// MetricsProviderClassName and MetricsProvider hold the
	// metricsProvider.* keys (e.g. className and httpPort for Prometheus).
	MetricsProviderClassName string
	MetricsProvider          map[string]string

	// SecureClientPort is the TLS client port (secureClientPort); 0 for
	// none. SecureClientPortAddress "" means all interfaces.
	SecureClientPort        int
	SecureClientPortAddress string

	// Security holds the security settings Zoo honours (see securityKeys),
	// by zoo.cfg name, whether they came from zoo.cfg or from a -D flag.
	Security map[string]string

	// Auth holds the SASL, enforced-authentication and audit settings.
	Auth Auth

	// Warnings are the settings that were ignored or adjusted.
	Warnings []Warning

	// pos records where each key was set, for messages; bad records keys
	// whose value did not parse, so Validate does not complain twice.
	pos map[string]Pos
	bad map[string]bool
	// source names the configuration when no key position applies.
	source string
	// warnedSingle keeps EnsureDefaults from repeating a warning.
	warnedSingle bool
}

// base returns Apache's defaults for the fields whose zero value means
// something else.
func base(source string) *Config {
	return &Config{
		MaxClientCnxns:          DefaultMaxClientCnxns,
		ClientPortListenBacklog: -1,
		StandaloneEnabled:       true,
		SyncEnabled:             true,
		ForceSync:               true,
		FsyncWarningThresholdMs: DefaultFsyncWarningThresholdMs,
		AdminEnableServer:       true,
		pos:                     map[string]Pos{},
		bad:                     map[string]bool{},
		source:                  source,
	}
}

// Default is the configuration of "zoo server" with no file: standalone on
// 127.0.0.1:2181 with its data in ./zoo-data. The admin server listens on
// loopback too, where Apache would bind every interface.
func Default() *Config {
	c := base("<default>")
	c.DataDir = "./zoo-data"
	c.ClientPort = DefaultClientPort
	c.ClientPortAddress = "127.0.0.1"
	c.AdminServerAddress = "127.0.0.1"
	c.EnsureDefaults()
	return c
}

// Pos returns where key was set, or the configuration's name if it was not.
func (c *Config) Pos(key string) Pos {
	if p, ok := c.pos[key]; ok {
		return p
	}
	return Pos{File: c.source}
}

// EnsureDefaults fills every field whose zero value means "not set":
// TickTime, the session timeouts (2 and 20 ticks), DataLogDir, the client
// address from this server's server.N line, and the size and interval
// defaults.
func (c *Config) EnsureDefaults() {
	setIfZero(&c.TickTime, DefaultTickTime)
	setIfZero(&c.MinSessionTimeout, 2*c.TickTime)
	setIfZero(&c.MaxSessionTimeout, 20*c.TickTime)
	if c.DataLogDir == "" {
		c.DataLogDir = c.DataDir
	}
	c.clientFromServerLine()
	c.adoptPeerType()
	c.derivedWarnings()
	setIfZero(&c.ElectionAlg, DefaultElectionAlg)
	setIfZero(&c.SnapRetainCount, DefaultSnapRetainCount)
	setIfZero(&c.SnapCount, DefaultSnapCount)
	setIfZero(&c.SnapSizeLimitKB, DefaultSnapSizeLimitKB)
	setIfZero(&c.PreAllocSizeKB, DefaultPreAllocSizeKB)
	setIfZero(&c.GlobalOutstandingLimit, DefaultGlobalOutstandingLimit)
	setIfZero(&c.JuteMaxBuffer, DefaultJuteMaxBuffer)
	setIfZero(&c.JuteMaxBufferExtraSize, max(c.JuteMaxBuffer, MinJuteMaxBufferExtraSize))
	setIfZero(&c.ContainerCheckInterval, DefaultContainerCheckInterval)
	setIfZero(&c.ContainerMaxPerMinute, DefaultContainerMaxPerMinute)
	if c.AdminServerAddress == "" {
		c.AdminServerAddress = DefaultAdminServerAddress
	}
	setIfZero(&c.AdminServerPort, DefaultAdminServerPort)
	setIfZero(&c.AdminIdleTimeout, DefaultAdminIdleTimeout)
	setIfZero(&c.AdminRateLimiterInterval, DefaultAdminRateLimiterInterval)
	if c.AdminCommandURL == "" {
		c.AdminCommandURL = DefaultAdminCommandURL
	}
}

func setIfZero[T int | int64](p *T, v T) {
	if *p == 0 {
		*p = v
	}
}

// clientFromServerLine takes the client address from this server's
// server.N line, as Apache's setupClientPort does, unless clientPort says
// something different (Validate reports that).
func (c *Config) clientFromServerLine() {
	s, ok := c.Self()
	if !ok || s.ClientPort == 0 {
		return
	}
	if c.ClientPort == 0 || c.ClientPort == s.ClientPort && isWildcard(c.ClientPortAddress) {
		c.ClientPort, c.ClientPortAddress = s.ClientPort, s.ClientHost
	}
}

func isWildcard(host string) bool {
	return host == "" || host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0"
}

// Self returns this server's server.N line.
func (c *Config) Self() (Server, bool) {
	for _, s := range c.Servers {
		if s.ID == c.MyID && c.MyID != 0 {
			return s, true
		}
	}
	return Server{}, false
}

// Membership renders the ensemble as /zookeeper/config holds it in
// Apache: a server.N line per member, in id order, then the config
// version in hex ("version=0" for a static zoo.cfg).
func (c *Config) Membership() string {
	var b strings.Builder
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "server.%d=%s\n", s.ID, s)
	}
	fmt.Fprintf(&b, "version=%x", c.ConfigVersion)
	return b.String()
}

// Voters returns the participants' count.
func (c *Config) Voters() int {
	n := 0
	for _, s := range c.Servers {
		if s.Type == Participant {
			n++
		}
	}
	return n
}

// Distributed reports whether this is an ensemble rather than a standalone
// server: Apache's isDistributed, more than one participant, or any
// server.N line with standaloneEnabled=false. Zoo runs a standalone server
// as an ensemble of one either way; this decides whether myid, initLimit and
// syncLimit are required.
func (c *Config) Distributed() bool {
	return len(c.Servers) > 0 && (!c.StandaloneEnabled || c.Voters() > 1)
}

// ClientAddr is the address to listen on for clients, host:port.
func (c *Config) ClientAddr() string {
	return joinHostPort(c.ClientPortAddress, c.ClientPort)
}

// SecureClientAddr is the address of the TLS client port, host:port.
func (c *Config) SecureClientAddr() string {
	return joinHostPort(c.SecureClientPortAddress, c.SecureClientPort)
}

// AdminAddr is the address of the admin server, host:port.
func (c *Config) AdminAddr() string {
	return joinHostPort(c.AdminServerAddress, c.AdminServerPort)
}

// Parse reads a zoo.cfg. name labels positions in messages (usually the
// path). It returns the configuration even when there are problems, so that
// Validate can look for more; the error is Problems. Call EnsureDefaults
// and Validate next.
func Parse(name string, data []byte) (*Config, error) {
	c := base(name)
	props, probs := parseProperties(name, string(data))
	props = c.dedup(name, props)
	dynamic := slices.ContainsFunc(props, func(p prop) bool { return javaTrim(p.key) == "dynamicConfigFile" })
	servers := map[int64]Server{}
	for _, p := range props {
		key, value := javaTrim(p.key), javaTrim(p.value)
		pos := Pos{name, p.line}
		c.pos[key] = pos
		n := len(c.Warnings)
		err := c.set(key, value, pos, dynamic, servers)
		for i := n; i < len(c.Warnings); i++ {
			if c.Warnings[i].Key == "" {
				c.Warnings[i].Key = key
			}
		}
		if err != nil {
			c.bad[key] = true
			probs = append(probs, &Problem{Pos: pos, Key: key, Err: err})
		}
	}
	c.Servers = sortedServers(servers)
	sortByLine(probs)
	return c, probs.err()
}

// sortByLine puts problems in file order (syntax problems are found before
// the others).
func sortByLine(ps Problems) {
	slices.SortStableFunc(ps, func(a, b *Problem) int { return a.Pos.Line - b.Pos.Line })
}

// dedup keeps the last of each duplicated key, as java.util.Properties does,
// and warns about the earlier ones.
func (c *Config) dedup(name string, props []prop) []prop {
	last := map[string]int{}
	for i, p := range props {
		last[javaTrim(p.key)] = i
	}
	var out []prop
	for i, p := range props {
		k := javaTrim(p.key)
		if j := last[k]; j != i {
			c.warn(Pos{name, p.line}, k, Duplicate, fmt.Sprintf("set again on line %d, which wins", props[j].line))
			continue
		}
		out = append(out, p)
	}
	return out
}

func sortedServers(m map[int64]Server) []Server {
	out := make([]Server, 0, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[id])
	}
	return out
}

func (c *Config) warn(pos Pos, key string, kind WarningKind, msg string) {
	c.Warnings = append(c.Warnings, Warning{Pos: pos, Key: key, Kind: kind, Msg: msg})
}

// set applies one key. Unknown and unsupported keys become warnings.
func (c *Config) set(key, value string, pos Pos, dynamic bool, servers map[int64]Server) error {
	// Security settings first: a honoured one with a field of its own is
	// handed on to its handler by setSecurity, so every security key is in
	// Config.Security whichever way it was set.
	if ok, err := c.setSecurity(key, value, pos); ok {
		return err
	}
	if h, ok := handlers[key]; ok {
		return h(c, value, pos)
	}
	switch {
	case strings.HasPrefix(key, "server."):
		if dynamic {
			return fmt.Errorf("%w: must be in the separate dynamic config file (dynamicConfigFile is set)", ErrConflict)
		}
		return addServer(servers, key, value, pos)
	case strings.HasPrefix(key, "group") || strings.HasPrefix(key, "weight"):
		if dynamic {
			return fmt.Errorf("%w: must be in the separate dynamic config file (dynamicConfigFile is set)", ErrConflict)
		}
		c.warn(pos, key, Unsupported, "hierarchical quorums are not supported; Zoo uses a plain majority of the participants")
	case strings.HasPrefix(key, "metricsProvider."):
		if c.MetricsProvider == nil {
			c.MetricsProvider = map[string]string{}
		}
		c.MetricsProvider[strings.TrimPrefix(key, "metricsProvider.")] = value
	case isUnsupported(key):
		c.warn(pos, key, Unsupported, "not supported by Zoo; ignored")
	default:
		msg := "unknown setting; ignored"
		if k := suggest(key); k != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", k)
		}
		c.warn(pos, key, Unknown, msg)
	}
	return nil
}

// addServer parses a server.N line into servers.
func addServer(servers map[int64]Server, key, value string, pos Pos) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(key, "server."), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: server id %q is not a number", ErrInvalid, strings.TrimPrefix(key, "server."))
	}
	if prev, ok := servers[id]; ok {
		return fmt.Errorf("%w: server id %d is also defined on line %d", ErrConflict, id, prev.Pos.Line)
	}
	s, err := ParseServer(id, value)
	if err != nil {
		return err
	}
	s.Pos = pos
	servers[id] = s
	return nil
}

// suggest returns the known key that key differs from only in case.
func suggest(key string) string {
	for k := range handlers {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}
