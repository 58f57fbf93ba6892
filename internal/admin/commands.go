package admin

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/server/fourlw"
)

// command is one AdminServer command (Apache's Commands.*Command).
type command struct {
	names          []string // the primary name first, then the aliases
	serverRequired bool     // answers "not currently serving" while not serving
	protected      bool     // needs an authorized user (snapshot, restore)
	get            func(h *handler, r *http.Request, resp *obj) int
	post           func(h *handler, r *http.Request, resp *obj) int
}

// commands are Apache 3.9's, with its names and aliases
// (Commands.registerAllCommands).
func commands() []*command {
	return []*command{
		{names: []string{"connection_stat_reset", "crst"}, serverRequired: true, get: func(h *handler, _ *http.Request, _ *obj) int {
			h.cfg.Source.ResetConnectionStats()
			return 0
		}},
		{names: []string{"configuration", "conf", "config"}, serverRequired: true, get: configuration},
		{names: []string{"connections", "cons"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			resp.put("connections", connections(h.cfg.Source.Connections()))
			resp.put("secure_connections", []any{})
			return 0
		}},
		{names: []string{"hash"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			ds := []*obj{}
			for _, d := range h.cfg.Source.DigestLog() {
				ds = append(ds, newObj().put("zxid", d.Zxid).put("digest", d.Digest).put("digest_version", 2))
			}
			resp.put("digests", ds)
			return 0
		}},
		{names: []string{"dirs"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			c := h.cfg.Source.Conf()
			resp.put("datadir_size", c.DataDirSize).put("logdir_size", c.DataLogSize)
			return 0
		}},
		{names: []string{"dump"}, serverRequired: true, get: dump},
		{names: []string{"environment", "env", "envi"}, get: func(h *handler, _ *http.Request, resp *obj) int {
			resp.put("zookeeper.version", h.cfg.Source.Stats().Version)
			for _, kv := range h.cfg.Source.Env() {
				resp.put(kv.Key, kv.Value)
			}
			return 0
		}},
		{names: []string{"get_trace_mask", "gtmk"}, get: func(h *handler, _ *http.Request, resp *obj) int {
			resp.put("tracemask", h.cfg.Source.TraceMask())
			return 0
		}},
		{names: []string{"initial_configuration", "icfg"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			resp.put("initial_configuration", h.cfg.InitialConfig)
			return 0
		}},
		{names: []string{"is_read_only", "isro"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			resp.put("read_only", h.cfg.Source.Stats().ReadOnly)
			return 0
		}},
		{names: []string{"last_snapshot", "lsnp"}, serverRequired: true, get: lastSnapshot},
		{names: []string{"leader", "lead"}, serverRequired: true, get: leader},
		{names: []string{"monitor", "mntr"}, get: monitor},
		{names: []string{"observer_connection_stat_reset", "orst"}, serverRequired: true, get: func(*handler, *http.Request, *obj) int {
			return 0 // no observer connections to reset (observers sync over raft)
		}},
		{names: []string{"restore", "rest"}, serverRequired: true, protected: true,
			post: func(*handler, *http.Request, *obj) int { return http.StatusServiceUnavailable }},
		{names: []string{"ruok"}, serverRequired: true, get: func(*handler, *http.Request, *obj) int { return 0 }},
		{names: []string{"set_trace_mask", "stmk"}, get: setTraceMask},
		{names: []string{"snapshot", "snap"}, serverRequired: true, protected: true,
			get: func(*handler, *http.Request, *obj) int { return http.StatusServiceUnavailable }},
		{names: []string{"server_stats", "srvr"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			serverStats(h, resp)
			return 0
		}},
		{names: []string{"stats", "stat"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			serverStats(h, resp)
			resp.put("connections", connections(h.cfg.Source.Connections()))
			resp.put("secure_connections", []any{})
			return 0
		}},
		{names: []string{"stat_reset", "srst"}, serverRequired: true, get: func(h *handler, _ *http.Request, _ *obj) int {
			h.cfg.Source.ResetServerStats()
			return 0
		}},
		{names: []string{"observers", "obsr"}, serverRequired: true, get: observers},
		{names: []string{"system_properties", "sysp"}, get: func(h *handler, _ *http.Request, resp *obj) int {
			env := slices.Clone(h.cfg.Source.Env())
			slices.SortFunc(env, func(a, b fourlw.KV) int { return strings.Compare(a.Key, b.Key) })
			for _, kv := range env {
				resp.put(kv.Key, kv.Value)
			}
			return 0
		}},
		{names: []string{"voting_view"}, serverRequired: true, get: votingView},
		{names: []string{"watches", "wchc"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			bySession := newObj()
			for _, w := range sortedWatches(h.cfg.Source.DataWatches(), false) {
				k := strconv.FormatInt(w.SessionID, 10)
				paths, _ := bySession.get(k).([]string)
				bySession.put(k, append(paths, w.Path))
			}
			resp.put("session_id_to_watched_paths", bySession)
			return 0
		}},
		{names: []string{"watches_by_path", "wchp"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			byPath := newObj()
			for _, w := range sortedWatches(h.cfg.Source.DataWatches(), true) {
				ids, _ := byPath.get(w.Path).([]int64)
				byPath.put(w.Path, append(ids, w.SessionID))
			}
			resp.put("path_to_session_ids", byPath)
			return 0
		}},
		{names: []string{"watch_summary", "wchs"}, serverRequired: true, get: func(h *handler, _ *http.Request, resp *obj) int {
			s := h.cfg.Source.WatchSummary()
			resp.put("num_connections", s.Connections).put("num_paths", s.Paths).put("num_total_watches", s.Total)
			return 0
		}},
		{names: []string{"zabstate"}, get: zabState},
	}
}

func configuration(h *handler, _ *http.Request, resp *obj) int {
	c := h.cfg.Source.Conf()
	resp.put("client_port", c.ClientPort).
		put("data_dir", c.DataDir).
		put("data_log_dir", c.DataLogDir).
		put("tick_time", c.TickTime).
		put("max_client_cnxns", c.MaxClientCnxns).
		put("min_session_timeout", c.MinSessionTimeout).
		put("max_session_timeout", c.MaxSessionTimeout).
		put("server_id", c.ServerID).
		put("client_port_listen_backlog", c.ClientPortListenBacklog)
	if q := c.Quorum; q != nil {
		resp.put("init_limit", q.InitLimit).
			put("sync_limit", q.SyncLimit).
			put("election_alg", q.ElectionAlg).
			put("election_port", q.ElectionPort).
			put("quorum_port", q.QuorumPort).
			put("peer_type", q.PeerType).
			put("membership", strings.Join(q.Members, "\n")+"\nversion="+strconv.FormatInt(q.Version, 16))
	}
	return 0
}

// connections is ServerCnxn.getConnectionInfo for each connection.
func connections(cs []fourlw.Conn) []*obj {
	out := []*obj{}
	for _, c := range cs {
		o := newObj().
			put("remote_socket_address", c.Remote).
			put("interest_ops", c.Interest).
			put("outstanding_requests", c.Queued).
			put("packets_received", c.Received).
			put("packets_sent", c.Sent)
		if c.SessionID != 0 {
			o.put("session_id", c.SessionID).
				put("last_operation", c.LastOp).
				put("established", c.Created.UnixMilli()).
				put("session_timeout", c.Timeout).
				put("last_cxid", c.LastCxid).
				put("last_zxid", c.LastZxid).
				put("last_response_time", c.LastResponse).
				put("last_latency", c.LastLatency).
				put("min_latency", c.MinLatency).
				put("avg_latency", c.AvgLatency).
				put("max_latency", c.MaxLatency)
		}
		out = append(out, o)
	}
	return out
}

func dump(h *handler, _ *http.Request, resp *obj) int {
	d := h.cfg.Source.Dump()
	expiry := newObj()
	for _, b := range d.SessionBuckets {
		ids := slices.Sorted(slices.Values(b.SessionIDs))
		if ids == nil {
			ids = []int64{}
		}
		expiry.put(strconv.FormatInt(b.Expires.UnixMilli(), 10), ids)
	}
	// A follower expires no sessions: like Apache's
	// LearnerSessionTracker, it has no buckets to show.
	eph := newObj()
	for _, id := range slices.Sorted(mapKeys(d.Ephemerals)) {
		eph.put(strconv.FormatInt(id, 10), slices.Sorted(slices.Values(d.Ephemerals[id])))
	}
	resp.put("expiry_time_to_session_ids", expiry).put("session_id_to_ephemeral_paths", eph)
	return 0
}

func lastSnapshot(h *handler, _ *http.Request, resp *obj) int {
	if h.cfg.LastSnapshot != nil {
		if zxid, at, ok := h.cfg.LastSnapshot(); ok {
			resp.put("zxid", strconv.FormatInt(zxid, 16)).put("timestamp", at.Unix())
			return 0
		}
	}
	resp.put("zxid", strconv.FormatInt(-1, 16)).put("timestamp", int64(-1))
	return 0
}

func leader(h *handler, _ *http.Request, resp *obj) int {
	if h.cfg.Ensemble == nil {
		resp.put("error", "server is not initialized")
		return 0
	}
	e := h.cfg.Ensemble()
	resp.put("is_leader", e.IsLeader).put("leader_id", e.LeaderID).put("leader_ip", e.LeaderAddr)
	return 0
}

// monitor is mntr as JSON: the same keys without "zk_", numbers as
// numbers (MonitorCommand).
func monitor(h *handler, _ *http.Request, resp *obj) int {
	out, _ := fourlw.Format("mntr", h.cfg.Source)
	if out == "" || !strings.HasPrefix(out, "zk_") {
		resp.put("error", msgNotServing)
		return 0
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		k = strings.TrimPrefix(k, "zk_")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			resp.put(k, n)
		} else if f, err := strconv.ParseFloat(v, 64); err == nil && k != "version" {
			resp.put(k, f)
		} else {
			resp.put(k, v)
		}
	}
	return 0
}

func setTraceMask(h *handler, r *http.Request, resp *obj) int {
	arg := r.URL.Query().Get("traceMask")
	if arg == "" {
		resp.put("error", "setTraceMask requires long traceMask argument")
		return 0
	}
	mask, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		resp.put("error", "setTraceMask requires long traceMask argument, got "+arg)
		return 0
	}
	if h.cfg.SetTraceMask != nil {
		h.cfg.SetTraceMask(mask)
	}
	resp.put("tracemask", mask)
	return 0
}

// serverStats is ServerStats as Jackson writes it, plus what
// SrvrCommand adds.
func serverStats(h *handler, resp *obj) {
	src := h.cfg.Source
	st, m, c := src.Stats(), src.Monitor(), src.Conf()
	crs := newObj().
		put("last_buffer_size", m.ClientResponseSize.Last).
		put("min_buffer_size", m.ClientResponseSize.Min).
		put("max_buffer_size", m.ClientResponseSize.Max)
	stats := newObj().
		put("packets_sent", st.Sent).
		put("packets_received", st.Received).
		put("fsync_threshold_exceed_count", st.SlowFsyncs).
		put("client_response_stats", crs).
		put("data_dir_size", c.DataDirSize).
		put("log_dir_size", c.DataLogSize).
		put("provider_null", false).
		put("server_state", st.Mode).
		put("last_processed_zxid", st.Zxid).
		put("outstanding_requests", st.Outstanding).
		put("avg_latency", st.Latency.Avg()).
		put("max_latency", st.Latency.Max).
		put("min_latency", st.Latency.Min).
		put("num_alive_client_connections", st.Connections).
		put("uptime", m.UptimeMs).
		put("auth_failed_count", m.AuthFailed).
		put("non_mtlsremote_conn_count", 0).
		put("non_mtlslocal_conn_count", 0)
	resp.put("version", st.Version).
		put("read_only", st.ReadOnly).
		put("server_stats", stats).
		put("client_response", crs)
	if st.Mode == fourlw.ModeLeader {
		p := st.ProposalSizes
		resp.put("proposal_stats", newObj().put("last_buffer_size", p.Last).put("min_buffer_size", p.Min).put("max_buffer_size", p.Max))
	}
	resp.put("node_count", st.NodeCount)
}

func observers(h *handler, _ *http.Request, resp *obj) int {
	n := 0
	if h.cfg.Ensemble != nil {
		n = h.cfg.Ensemble().ObserverCount
	}
	// Zoo's observers are raft learners with no learner-handler
	// connection to describe; their count is known, their details are
	// in voting_view.
	resp.put("synced_observers", n).put("observers", []any{})
	return 0
}

func votingView(h *handler, _ *http.Request, resp *obj) int {
	view := newObj()
	if h.cfg.Ensemble != nil {
		for _, m := range h.cfg.Ensemble().Members {
			if m.Observer {
				continue // Apache's voting view holds the voters only
			}
			view.put(strconv.FormatInt(m.ID, 10), newObj().
				put("server_addresses", []string{m.QuorumAddr}).
				put("election_addresses", []string{m.ElectionAddr}).
				put("client_address", m.ClientAddr).
				put("learner_type", "participant"))
		}
	}
	resp.put("current_config", view)
	return 0
}

func zabState(h *handler, _ *http.Request, resp *obj) int {
	if h.cfg.Ensemble == nil {
		resp.put("voting", false).put("zabstate", "")
		return 0
	}
	e := h.cfg.Ensemble()
	state := "broadcast"
	if !h.cfg.Source.Serving() {
		state = "election"
	}
	resp.put("myid", e.MyID).
		put("is_leader", e.IsLeader).
		put("quorum_address", e.QuorumAddr).
		put("election_address", e.ElectionAddr).
		put("client_address", e.ClientAddr).
		put("voting", e.Voting).
		// Zoo's zxid is the raft index, and its epoch the raft term.
		put("last_zxid", "0x"+strconv.FormatInt(e.LastZxid, 16)).
		put("zab_epoch", e.Term).
		put("zab_counter", e.LastZxid).
		put("zabstate", state)
	return 0
}

// sortedWatches returns the watches without duplicates, by session (or by
// path) first.
func sortedWatches(in []fourlw.Watch, byPath bool) []fourlw.Watch {
	ws := slices.Clone(in)
	slices.SortFunc(ws, func(a, b fourlw.Watch) int {
		if byPath {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return cmp64(a.SessionID, b.SessionID)
		}
		if c := cmp64(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return slices.Compact(ws)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
