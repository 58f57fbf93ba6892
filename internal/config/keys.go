package config

import (
	"fmt"
	"strconv"
	"strings"
)

// handler applies one key's value.
type handler func(c *Config, value string, pos Pos) error

// handlers are the keys Zoo implements. QuorumPeerConfig's own keys parse
// strictly as Apache does (Integer.parseInt, "true"/"false"); keys Apache
// reads as Java system properties (snapCount, forceSync, ...) fail too when
// malformed, where Apache would quietly fall back to a default.
var handlers = map[string]handler{
	"localSessionsEnabled":    localSessionsKey,
	"readonlymode.enabled":    readOnlyCfgKey,
	"tickTime":                intKey(func(c *Config) *int { return &c.TickTime }, 1),
	"initLimit":               intKey(func(c *Config) *int { return &c.InitLimit }, 0),
	"syncLimit":               intKey(func(c *Config) *int { return &c.SyncLimit }, 0),
	"dataDir":                 strKey(func(c *Config) *string { return &c.DataDir }, true),
	"dataLogDir":              strKey(func(c *Config) *string { return &c.DataLogDir }, true),
	"clientPort":              portKey(func(c *Config) *int { return &c.ClientPort }),
	"clientPortAddress":       strKey(func(c *Config) *string { return &c.ClientPortAddress }, true),
	"maxClientCnxns":          intKey(func(c *Config) *int { return &c.MaxClientCnxns }, 0),
	"maxCnxns":                intKey(func(c *Config) *int { return &c.MaxCnxns }, 0),
	"minSessionTimeout":       sessionTimeoutKey(func(c *Config) *int { return &c.MinSessionTimeout }, "2"),
	"maxSessionTimeout":       sessionTimeoutKey(func(c *Config) *int { return &c.MaxSessionTimeout }, "20"),
	"clientPortListenBacklog": intKey(func(c *Config) *int { return &c.ClientPortListenBacklog }, -1),
	"peerType":                peerTypeKey,
	"standaloneEnabled":       boolKey(func(c *Config) *bool { return &c.StandaloneEnabled }),
	"reconfigEnabled":         boolKey(func(c *Config) *bool { return &c.ReconfigEnabled }),
	"dynamicConfigFile":       strKey(func(c *Config) *string { return &c.DynamicConfigFile }, true),
	"version":                 versionKey,
	"electionAlg":             electionAlgKey,
	"quorumListenOnAllIPs":    boolKey(func(c *Config) *bool { return &c.QuorumListenOnAllIPs }),
	"syncEnabled":             boolKey(func(c *Config) *bool { return &c.SyncEnabled }),

	"autopurge.snapRetainCount":   snapRetainKey,
	"autopurge.purgeInterval":     intKey(func(c *Config) *int { return &c.PurgeInterval }, -1<<31),
	"snapCount":                   snapCountKey,
	"snapSizeLimitInKb":           snapSizeLimitKey,
	"commitLogCount":              intKey(func(c *Config) *int { return &c.CommitLogCount }, 1),
	"preAllocSize":                int64Key(func(c *Config) *int64 { return &c.PreAllocSizeKB }, 1),
	"fsync.warningthresholdms":    int64Key(func(c *Config) *int64 { return &c.FsyncWarningThresholdMs }, 0),
	"forceSync":                   yesNoKey(func(c *Config) *bool { return &c.ForceSync }),
	"snapshot.compression.method": compressionKey,
	"gcPercent":                   intKey(func(c *Config) *int { return &c.GCPercent }, 1),

	"globalOutstandingLimit":   intKey(func(c *Config) *int { return &c.GlobalOutstandingLimit }, 1),
	"jute.maxbuffer":           juteKey(func(c *Config) *int { return &c.JuteMaxBuffer }, 1),
	"jute.maxbuffer.extrasize": juteExtraKey,
	"4lw.commands.whitelist":   whitelistKey,

	"admin.enableServer":  sysBoolKey(func(c *Config) *bool { return &c.AdminEnableServer }),
	"admin.serverAddress": strKey(func(c *Config) *string { return &c.AdminServerAddress }, true),
	"admin.serverPort":    portKey(func(c *Config) *int { return &c.AdminServerPort }),
	"admin.idleTimeout":   intKey(func(c *Config) *int { return &c.AdminIdleTimeout }, 1),
	"admin.commandURL":    strKey(func(c *Config) *string { return &c.AdminCommandURL }, true),

	"admin.rateLimiterIntervalInMS": intKey(func(c *Config) *int { return &c.AdminRateLimiterInterval }, 1),
	"admin.snapshot.enabled":        adminSnapshotEnabledKey,
	"admin.restore.enabled":         adminRestoreEnabledKey,

	"extendedTypesEnabled":                     sysBoolKey(func(c *Config) *bool { return &c.ExtendedTypesEnabled }),
	"znode.container.checkIntervalMs":          intKey(func(c *Config) *int { return &c.ContainerCheckInterval }, 1),
	"znode.container.maxPerMinute":             intKey(func(c *Config) *int { return &c.ContainerMaxPerMinute }, 1),
	"DigestAuthenticationProvider.superDigest": superDigestKey,
	"skipACL":                   yesNoKey(func(c *Config) *bool { return &c.SkipACL }),
	"enforceQuota":              sysBoolKey(func(c *Config) *bool { return &c.EnforceQuota }),
	"metricsProvider.className": strKey(func(c *Config) *string { return &c.MetricsProviderClassName }, true),

	"superUser": authStrKey(func(a *Auth) *string { return &a.SuperUser }),
	"SASLAuthenticationProvider.superPassword": authStrKey(func(a *Auth) *string { return &a.SuperPassword }),
	"allowSaslFailedClients":                   authBoolKey(func(a *Auth) *bool { return &a.AllowSASLFailedClients }),
	"enforce.auth.enabled":                     authBoolKey(func(a *Auth) *bool { return &a.EnforceAuth }),
	"enforce.auth.schemes":                     enforceSchemesKey,
	"sessionRequireClientSASLAuth":             authBoolKey(func(a *Auth) *bool { return &a.SessionRequireClientSASLAuth }),
	"kerberos.removeHostFromPrincipal":         authBoolKey(func(a *Auth) *bool { return &a.KerberosRemoveHost }),
	"kerberos.removeRealmFromPrincipal":        authBoolKey(func(a *Auth) *bool { return &a.KerberosRemoveRealm }),
	"audit.enable":                             authBoolKey(func(a *Auth) *bool { return &a.Audit }),
	"audit.file":                               authStrKey(func(a *Auth) *string { return &a.AuditFile }),
	"audit.maxFileSize":                        auditSizeKey,
}

// unsupported are Apache 3.8 keys Zoo does not implement, whose absence
// makes Zoo no weaker than asked (security settings are in securityKeys);
// unsupportedPrefixes cover families of them.
var unsupported = map[string]bool{
	"client.secure":                 true,
	"localSessionsUpgradingEnabled": true, "observerMasterPort": true,
	"connectToLearnerMasterLimit": true, "oraclePath": true, "quorum.cnxn.threads.size": true,
	"electionPortBindRetry": true, "tcpKeepAlive": true, "clientTcpKeepAlive": true,
	"txnLogSizeLimitInKb":  true,
	"maxResponseCacheSize": true, "maxGetChildrenResponseCacheSize": true,
	"requestThrottleLimit": true, "requestThrottleStallTime": true, "requestThrottleDropStale": true,
	"largeRequestMaxBytes": true, "largeRequestThreshold": true, "digest.enabled": true,
	"outstandingHandshake.limit": true, "learner.asyncSending": true, "learner.closeSocketAsync": true,
	"leader.closeSocketAsync": true, "forward_learner_requests_to_commit_processor_disabled": true,
	"serializeLastProcessedZxid.enabled": true, "flushDelay": true, "maxWriteQueuePollTime": true,
	"maxBatchSize": true, "watchManagerName": true, "watcherCleanThreshold": true,
	"watcherCleanIntervalInSeconds": true, "watcherCleanThreadsNum": true,
	"maxInProcessingDeadWatchers": true, "closeSessionTxn.enabled": true,
	"znode.container.maxNeverUsedIntervalMs": true,
	"admin.httpVersion":                      true, "emulate353TTLNodes": true,
	"cnxTimeout": true,
}

var unsupportedPrefixes = []string{
	"multiAddress.", "jvm.pause.", "netty.", "nio.", "connection_throttle_",
}

func isUnsupported(key string) bool {
	if unsupported[key] {
		return true
	}
	for _, p := range unsupportedPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// parseJavaInt is Integer.parseInt: optional sign, decimal digits, 32 bits.
func parseJavaInt(value string) (int, error) {
	v, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not an integer", ErrInvalid, value)
	}
	return int(v), nil
}

func intKey(field func(*Config) *int, min int) handler {
	return func(c *Config, value string, _ Pos) error {
		v, err := parseJavaInt(value)
		if err != nil {
			return err
		}
		if v < min {
			return fmt.Errorf("%w: %d is below the minimum %d", ErrInvalid, v, min)
		}
		*field(c) = v
		return nil
	}
}

func int64Key(field func(*Config) *int64, min int64) handler {
	return func(c *Config, value string, _ Pos) error {
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: %q is not an integer", ErrInvalid, value)
		}
		if v < min {
			return fmt.Errorf("%w: %d is below the minimum %d", ErrInvalid, v, min)
		}
		*field(c) = v
		return nil
	}
}

func portKey(field func(*Config) *int) handler {
	return func(c *Config, value string, _ Pos) error {
		v, err := parseJavaInt(value)
		if err != nil {
			return err
		}
		if v < 0 || v > 65535 {
			return fmt.Errorf("%w: port %d out of range", ErrInvalid, v)
		}
		*field(c) = v
		return nil
	}
}

func strKey(field func(*Config) *string, nonEmpty bool) handler {
	return func(c *Config, value string, _ Pos) error {
		if nonEmpty && value == "" {
			return fmt.Errorf("%w: empty value", ErrInvalid)
		}
		*field(c) = value
		return nil
	}
}

// boolKey is QuorumPeerConfig.parseBoolean: "true" or "false", any case.
func boolKey(field func(*Config) *bool) handler {
	return func(c *Config, value string, _ Pos) error {
		switch strings.ToLower(value) {
		case "true":
			*field(c) = true
		case "false":
			*field(c) = false
		default:
			return fmt.Errorf("%w: %q: choose true or false", ErrInvalid, value)
		}
		return nil
	}
}

// sysBoolKey reads a key Apache takes from a system property with
// Boolean.parseBoolean, where anything but "true" is false. Zoo warns about
// values that are neither true nor false instead of silently reading false.
func sysBoolKey(field func(*Config) *bool) handler {
	return func(c *Config, value string, pos Pos) error {
		if err := boolKey(field)(c, value, pos); err != nil {
			*field(c) = false
			c.warn(pos, "", Adjusted, fmt.Sprintf("%q is not true or false; read as false, as Apache does", value))
		}
		return nil
	}
}

// yesNoKey reads forceSync and skipACL, which Apache compares with "no" and
// "yes"; true and false are accepted too.
func yesNoKey(field func(*Config) *bool) handler {
	return func(c *Config, value string, _ Pos) error {
		switch strings.ToLower(value) {
		case "yes", "true":
			*field(c) = true
		case "no", "false":
			*field(c) = false
		default:
			return fmt.Errorf("%w: %q: choose yes or no", ErrInvalid, value)
		}
		return nil
	}
}

// sessionTimeoutKey reads min/maxSessionTimeout. 0 (and Apache's -1) mean
// the default, a multiple of tickTime; Apache would take an explicit 0
// literally.
func sessionTimeoutKey(field func(*Config) *int, ticks string) handler {
	return func(c *Config, value string, pos Pos) error {
		v, err := parseJavaInt(value)
		if err != nil {
			return err
		}
		if v < -1 {
			return fmt.Errorf("%w: %d is negative", ErrInvalid, v)
		}
		if v <= 0 {
			c.warn(pos, "", Adjusted, fmt.Sprintf("%d means the default, %s ticks", v, ticks))
			v = 0
		}
		*field(c) = v
		return nil
	}
}

func peerTypeKey(c *Config, value string, _ Pos) error {
	t, err := parseLearnerType(value)
	c.PeerType = t
	return err
}

func versionKey(c *Config, value string, _ Pos) error {
	v, err := strconv.ParseInt(value, 16, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not a hex version", ErrInvalid, value)
	}
	c.ConfigVersion = v
	return nil
}

func electionAlgKey(c *Config, value string, _ Pos) error {
	v, err := parseJavaInt(value)
	if err != nil {
		return err
	}
	if v != DefaultElectionAlg {
		return fmt.Errorf("%w: only electionAlg 3 is supported", ErrInvalid)
	}
	c.ElectionAlg = v
	return nil
}

// snapRetainKey raises a count below 3 to 3, with a warning, as Apache does.
func snapRetainKey(c *Config, value string, pos Pos) error {
	v, err := parseJavaInt(value)
	if err != nil {
		return err
	}
	if v < DefaultSnapRetainCount {
		c.warn(pos, "", Adjusted, fmt.Sprintf("%d is below the minimum; using %d", v, DefaultSnapRetainCount))
		v = DefaultSnapRetainCount
	}
	c.SnapRetainCount = v
	return nil
}

// snapCountKey raises a count below 2 to 2, with a warning, as Apache's
// SyncRequestProcessor does.
func snapCountKey(c *Config, value string, pos Pos) error {
	v, err := parseJavaInt(value)
	if err != nil {
		return err
	}
	if v < 2 {
		c.warn(pos, "", Adjusted, fmt.Sprintf("%d is below the minimum; using 2", v))
		v = 2
	}
	c.SnapCount = v
	return nil
}

// parseJavaDecode is Integer.decode, which Integer.getInteger uses for
// jute.maxbuffer: decimal, 0x/0X/# hex, or 0-prefixed octal.
func parseJavaDecode(value string) (int, error) {
	s, neg := value, false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	b := 10
	switch {
	case strings.HasPrefix(s, "0x"), strings.HasPrefix(s, "0X"):
		b, s = 16, s[2:]
	case strings.HasPrefix(s, "#"):
		b, s = 16, s[1:]
	case len(s) > 1 && s[0] == '0':
		b, s = 8, s[1:]
	}
	if s == "" || s[0] == '-' || s[0] == '+' {
		return 0, fmt.Errorf("%w: %q is not an integer", ErrInvalid, value)
	}
	v, err := strconv.ParseInt(s, b, 64)
	if neg {
		v = -v
	}
	if err != nil || v != int64(int32(v)) {
		return 0, fmt.Errorf("%w: %q is not a 32-bit integer", ErrInvalid, value)
	}
	return int(v), nil
}

func juteKey(field func(*Config) *int, min int) handler {
	return func(c *Config, value string, _ Pos) error {
		v, err := parseJavaDecode(value)
		if err != nil {
			return err
		}
		if v < min {
			return fmt.Errorf("%w: %d must be positive", ErrInvalid, v)
		}
		*field(c) = v
		return nil
	}
}

// juteExtraKey raises an extra size below 1024 to 1024, as Apache's
// BinaryInputArchive does.
func juteExtraKey(c *Config, value string, pos Pos) error {
	v, err := parseJavaDecode(value)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%w: %d is negative", ErrInvalid, v)
	}
	if v < MinJuteMaxBufferExtraSize {
		c.warn(pos, "", Adjusted, fmt.Sprintf("%d is below the minimum; using %d", v, MinJuteMaxBufferExtraSize))
		v = MinJuteMaxBufferExtraSize
	}
	c.JuteMaxBufferExtraSize = v
	return nil
}

func compressionKey(c *Config, value string, pos Pos) error {
	switch value {
	case "", "gz", "snappy":
		c.SnapshotCompression = value
	default:
		c.warn(pos, "", Adjusted, fmt.Sprintf("unknown method %q; snapshots are not compressed, as in Apache", value))
		c.SnapshotCompression = ""
	}
	return nil
}

// whitelistKey splits 4lw.commands.whitelist on commas, as Apache's
// FourLetterCommands.isEnabled does, dropping empty entries.
func whitelistKey(c *Config, value string, _ Pos) error {
	c.FourLetterWords = []string{}
	for _, w := range strings.Split(value, ",") {
		if w = strings.TrimSpace(w); w != "" {
			c.FourLetterWords = append(c.FourLetterWords, w)
		}
	}
	return nil
}

// adminSnapshotEnabledKey reads admin.snapshot.enabled as Apache's
// Boolean.parseBoolean with default true: anything but "true" disables the
// snapshot command (the safe reading of a typo).
func adminSnapshotEnabledKey(c *Config, value string, _ Pos) error {
	c.AdminSnapshotDisabled = !strings.EqualFold(value, "true")
	return nil
}

// adminRestoreEnabledKey reads admin.restore.enabled as Apache reads
// zookeeper.admin.restore.enabled: anything but "true" disables restore.
func adminRestoreEnabledKey(c *Config, value string, _ Pos) error {
	c.AdminRestoreDisabled = !strings.EqualFold(value, "true")
	return nil
}

func superDigestKey(c *Config, value string, _ Pos) error {
	if user, _, ok := strings.Cut(value, ":"); !ok || user == "" {
		return fmt.Errorf("%w: want user:base64digest", ErrInvalid)
	}
	c.SuperDigest = value
	return nil
}

// snapSizeLimitKey is snapSizeLimitInKb: as in Apache, 0 or less turns the
// limit off (stored as -1, so that the default does not replace it).
func snapSizeLimitKey(c *Config, value string, _ Pos) error {
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not an integer", ErrInvalid, value)
	}
	if v > 1<<53 {
		return fmt.Errorf("%w: %d KiB is too large", ErrInvalid, v)
	}
	if v <= 0 {
		v = -1
	}
	c.SnapSizeLimitKB = v
	return nil
}
