package fourlw

import (
	"strconv"
	"strings"
)

// role decides which mntr lines apply.
type role int

const (
	roleStandalone role = iota
	roleQuorum          // follower or observer
	roleLeader
)

// mntrLine is one standard mntr line: its key, the roles that print it and
// how to get its value.
type mntrLine struct {
	key    string
	quorum bool // printed only by quorum members
	leader bool // printed only by the leader
	// printed only by observers (ObserverZooKeeperServer.dumpMonitorValues)
	observer bool
	value    func(Stats, Monitor) string
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// mntrLines are the lines Apache 3.8 prints before its counters, in the order
// it prints them (its metrics live in a HashMap, so the order is the hash
// order; it is the same in every role, with the role-specific lines
// interleaved as below).
var mntrLines = []mntrLine{
	{key: "version", value: func(s Stats, _ Monitor) string { return s.Version }},
	{key: "server_state", value: func(s Stats, _ Monitor) string { return s.Mode }},
	{key: "peer_state", quorum: true, value: func(_ Stats, m Monitor) string { return m.PeerState }},
	{key: "observer_master_id", observer: true, value: func(_ Stats, m Monitor) string { return i64(m.ObserverMasterID) }},
	{key: "ephemerals_count", value: func(_ Stats, m Monitor) string { return i64(m.EphemeralsCount) }},
	{key: "num_alive_connections", value: func(s Stats, _ Monitor) string { return strconv.Itoa(s.Connections) }},
	{key: "avg_latency", value: func(s Stats, _ Monitor) string { return javaDouble(s.Latency.Avg()) }},
	{key: "min_proposal_size", leader: true, value: func(s Stats, _ Monitor) string { return i64(s.ProposalSizes.Min) }},
	{key: "outstanding_requests", value: func(s Stats, _ Monitor) string { return i64(s.Outstanding) }},
	{key: "znode_count", value: func(s Stats, _ Monitor) string { return i64(s.NodeCount) }},
	{key: "global_sessions", value: func(_ Stats, m Monitor) string { return i64(m.GlobalSessions) }},
	{key: "non_mtls_remote_conn_count", value: zero},
	{key: "last_client_response_size", value: func(_ Stats, m Monitor) string { return i64(m.ClientResponseSize.Last) }},
	{key: "packets_sent", value: func(s Stats, _ Monitor) string { return i64(s.Sent) }},
	{key: "packets_received", value: func(s Stats, _ Monitor) string { return i64(s.Received) }},
	{key: "max_proposal_size", leader: true, value: func(s Stats, _ Monitor) string { return i64(s.ProposalSizes.Max) }},
	{key: "max_client_response_size", value: func(_ Stats, m Monitor) string { return i64(m.ClientResponseSize.Max) }},
	{key: "synced_followers", leader: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.SyncedFollowers) }},
	{key: "connection_drop_probability", value: func(Stats, Monitor) string { return "0.0" }},
	{key: "watch_count", value: func(_ Stats, m Monitor) string { return i64(m.WatchCount) }},
	{key: "synced_non_voting_followers", leader: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.SyncedNonVotingFollowers) }},
	{key: "synced_observers", leader: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.SyncedObservers) }},
	{key: "auth_failed_count", value: func(_ Stats, m Monitor) string { return i64(m.AuthFailed) }},
	{key: "min_latency", value: func(s Stats, _ Monitor) string { return i64(s.Latency.Min) }},
	{key: "max_file_descriptor_count", value: func(_ Stats, m Monitor) string { return i64(m.MaxFileDescriptors) }},
	{key: "approximate_data_size", value: func(_ Stats, m Monitor) string { return i64(m.ApproximateDataSize) }},
	{key: "open_file_descriptor_count", value: func(_ Stats, m Monitor) string { return i64(m.OpenFileDescriptors) }},
	{key: "last_proposal_size", leader: true, value: func(s Stats, _ Monitor) string { return i64(s.ProposalSizes.Last) }},
	{key: "pending_syncs", leader: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.PendingSyncs) }},
	{key: "leader_uptime", leader: true, value: func(_ Stats, m Monitor) string { return i64(m.LeaderUptimeMs) }},
	{key: "local_sessions", value: func(_ Stats, m Monitor) string { return i64(m.LocalSessions) }},
	{key: "uptime", value: func(_ Stats, m Monitor) string { return i64(m.UptimeMs) }},
	{key: "max_latency", value: func(s Stats, _ Monitor) string { return i64(s.Latency.Max) }},
	{key: "outstanding_tls_handshake", value: zero},
	{key: "learners", leader: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.Learners) }},
	{key: "min_client_response_size", value: func(_ Stats, m Monitor) string { return i64(m.ClientResponseSize.Min) }},
	{key: "non_mtls_local_conn_count", value: zero},
	{key: "quorum_size", quorum: true, value: func(_ Stats, m Monitor) string { return strconv.Itoa(m.QuorumSize) }},
}

func zero(Stats, Monitor) string { return "0" }

func formatMntr(b *strings.Builder, src Source) {
	st := src.Stats()
	m := src.Monitor()
	r := roleStandalone
	switch st.Mode {
	case ModeLeader:
		r = roleLeader
	case ModeFollower, ModeObserver:
		r = roleQuorum
	}
	for _, l := range mntrLines {
		if l.quorum && r == roleStandalone || l.leader && r != roleLeader || l.observer && st.Mode != ModeObserver {
			continue
		}
		writeMntr(b, l.key, l.value(st, m))
	}
	for _, kv := range m.Extra {
		writeMntr(b, kv.Key, kv.Value)
	}
}

func writeMntr(b *strings.Builder, key, value string) {
	b.WriteString("zk_")
	b.WriteString(key)
	b.WriteByte('\t')
	b.WriteString(value)
	b.WriteByte('\n')
}
