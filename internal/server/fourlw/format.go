package fourlw

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// hex prints v as Java's Long.toHexString does: two's complement, no
// leading zeros.
func hex(v int64) string { return strconv.FormatUint(uint64(v), 16) }

func formatIsro(b *strings.Builder, src Source) {
	switch {
	case !src.Serving():
		b.WriteString("null")
	case src.Stats().ReadOnly:
		b.WriteString("ro")
	default:
		b.WriteString("rw")
	}
}

func formatEnvi(b *strings.Builder, src Source) {
	b.WriteString("Environment:\n")
	writeKV(b, "zookeeper.version", src.Stats().Version)
	for _, kv := range src.Env() {
		writeKV(b, kv.Key, kv.Value)
	}
}

func writeKV(b *strings.Builder, k, v string) {
	b.WriteString(k)
	b.WriteByte('=')
	b.WriteString(v)
	b.WriteByte('\n')
}

// formatStat writes srvr, or stat when clients is set (StatCommand).
func formatStat(b *strings.Builder, src Source, clients bool) {
	st := src.Stats()
	b.WriteString("Zookeeper version: ")
	b.WriteString(st.Version)
	b.WriteByte('\n')
	if st.ReadOnly {
		b.WriteString("READ-ONLY mode; serving only read-only clients\n")
	}
	if clients {
		b.WriteString("Clients:\n")
		for _, c := range src.Connections() {
			writeConn(b, c, true)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	// ServerStats.toString.
	b.WriteString("Latency min/avg/max: " + itoa(st.Latency.Min) + "/" +
		javaDouble(st.Latency.Avg()) + "/" + itoa(st.Latency.Max) + "\n")
	b.WriteString("Received: " + itoa(st.Received) + "\n")
	b.WriteString("Sent: " + itoa(st.Sent) + "\n")
	b.WriteString("Connections: " + strconv.Itoa(st.Connections) + "\n")
	b.WriteString("Outstanding: " + itoa(st.Outstanding) + "\n")
	b.WriteString("Zxid: 0x" + hex(st.Zxid) + "\n")
	b.WriteString("Mode: " + st.Mode + "\n")
	b.WriteString("Node count: " + itoa(st.NodeCount) + "\n")
	if st.Mode == ModeLeader {
		p := st.ProposalSizes
		b.WriteString("Proposal sizes last/min/max: " + itoa(p.Last) + "/" + itoa(p.Min) + "/" + itoa(p.Max) + "\n")
	}
}

// writeConn writes one connection as ServerCnxn.dumpConnectionInfo does,
// without the trailing newline.
func writeConn(b *strings.Builder, c Conn, brief bool) {
	b.WriteString(" /")
	b.WriteString(c.Remote)
	b.WriteString("[" + strconv.FormatInt(int64(c.Interest), 16) + "]")
	b.WriteString("(queued=" + itoa(c.Queued) + ",recved=" + itoa(c.Received) + ",sent=" + itoa(c.Sent))
	if !brief && c.SessionID != 0 {
		b.WriteString(",sid=0x" + hex(c.SessionID))
		b.WriteString(",lop=" + c.LastOp)
		b.WriteString(",est=" + itoa(c.Created.UnixMilli()))
		b.WriteString(",to=" + strconv.Itoa(int(c.Timeout)))
		if c.LastCxid >= 0 {
			b.WriteString(",lcxid=0x" + hex(c.LastCxid))
		}
		b.WriteString(",lzxid=0x" + hex(c.LastZxid))
		b.WriteString(",lresp=" + itoa(c.LastResponse))
		b.WriteString(",llat=" + itoa(c.LastLatency))
		b.WriteString(",minlat=" + itoa(c.MinLatency))
		b.WriteString(",avglat=" + itoa(c.AvgLatency))
		b.WriteString(",maxlat=" + itoa(c.MaxLatency))
	}
	b.WriteByte(')')
}

func formatCons(b *strings.Builder, src Source) {
	for _, c := range src.Connections() {
		writeConn(b, c, false)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

func formatConf(b *strings.Builder, src Source) {
	c := src.Conf()
	writeKV(b, "clientPort", strconv.Itoa(c.ClientPort))
	writeKV(b, "secureClientPort", strconv.Itoa(c.SecureClientPort))
	writeKV(b, "dataDir", c.DataDir)
	writeKV(b, "dataDirSize", itoa(c.DataDirSize))
	writeKV(b, "dataLogDir", c.DataLogDir)
	writeKV(b, "dataLogSize", itoa(c.DataLogSize))
	writeKV(b, "tickTime", strconv.Itoa(c.TickTime))
	writeKV(b, "maxClientCnxns", strconv.Itoa(c.MaxClientCnxns))
	writeKV(b, "minSessionTimeout", strconv.Itoa(c.MinSessionTimeout))
	writeKV(b, "maxSessionTimeout", strconv.Itoa(c.MaxSessionTimeout))
	writeKV(b, "clientPortListenBacklog", strconv.Itoa(c.ClientPortListenBacklog))
	writeKV(b, "serverId", itoa(c.ServerID))
	q := c.Quorum
	if q == nil {
		return
	}
	writeKV(b, "initLimit", strconv.Itoa(q.InitLimit))
	writeKV(b, "syncLimit", strconv.Itoa(q.SyncLimit))
	writeKV(b, "electionAlg", strconv.Itoa(q.ElectionAlg))
	writeKV(b, "electionPort", strconv.Itoa(q.ElectionPort))
	writeKV(b, "quorumPort", strconv.Itoa(q.QuorumPort))
	writeKV(b, "peerType", strconv.Itoa(q.PeerType))
	b.WriteString("membership: \n")
	// QuorumMaj.toString: one line per member, then the version with no
	// trailing newline.
	for _, m := range q.Members {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	b.WriteString("version=" + hex(q.Version))
}

func formatDirs(b *strings.Builder, src Source) {
	c := src.Conf()
	b.WriteString("datadir_size: " + itoa(c.DataDirSize) + "\n")
	b.WriteString("logdir_size: " + itoa(c.DataLogSize) + "\n")
}

// formatWchs writes the data watch summary (WatchManager.toString plus the
// newline WatchCommand adds).
func formatWchs(b *strings.Builder, src Source) {
	s := src.WatchSummary()
	b.WriteString(strconv.Itoa(s.Connections) + " connections watching " + strconv.Itoa(s.Paths) + " paths\n")
	b.WriteString("Total watches:" + strconv.Itoa(s.Total) + "\n")
}

// formatWatches writes wchc (by session) or wchp (by path), sorted where
// Apache's hash order is arbitrary, and the final empty line.
func formatWatches(b *strings.Builder, src Source, byPath bool) {
	ws := dedupWatches(src.DataWatches())
	if byPath {
		slices.SortFunc(ws, func(x, y Watch) int {
			if c := strings.Compare(x.Path, y.Path); c != 0 {
				return c
			}
			return cmpInt(x.SessionID, y.SessionID)
		})
		for i, w := range ws {
			if i == 0 || ws[i-1].Path != w.Path {
				b.WriteString(w.Path + "\n")
			}
			b.WriteString("\t0x" + hex(w.SessionID) + "\n")
		}
	} else {
		for i, w := range ws { // dedupWatches sorts by session, then path
			if i == 0 || ws[i-1].SessionID != w.SessionID {
				b.WriteString("0x" + hex(w.SessionID) + "\n")
			}
			b.WriteString("\t" + w.Path + "\n")
		}
	}
	b.WriteByte('\n')
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// dedupWatches returns the watches sorted by session then path, without
// duplicates (a session watching a path twice holds one watch).
func dedupWatches(in []Watch) []Watch {
	ws := slices.Clone(in)
	slices.SortFunc(ws, func(x, y Watch) int {
		if c := cmpInt(x.SessionID, y.SessionID); c != 0 {
			return c
		}
		return strings.Compare(x.Path, y.Path)
	})
	return slices.Compact(ws)
}

// javaDate formats t as Java's Date.toString does.
func javaDate(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon Jan 02 15:04:05 MST 2006")
}

func formatDump(b *strings.Builder, src Source) {
	d := src.Dump()
	b.WriteString("SessionTracker dump:\n")
	if d.Global {
		// LearnerSessionTracker.dumpSessions.
		b.WriteString("Global Sessions(" + strconv.Itoa(len(d.GlobalSessions)) + "):\n")
		gs := slices.Clone(d.GlobalSessions)
		slices.SortFunc(gs, func(x, y SessionTimeout) int { return cmpInt(x.SessionID, y.SessionID) })
		for _, s := range gs {
			b.WriteString("0x" + hex(s.SessionID) + "\t" + strconv.Itoa(int(s.Timeout)) + "ms\n")
		}
	} else {
		// SessionTrackerImpl.dumpSessions: "Session " + ExpiryQueue.dump.
		n := 0
		for _, bk := range d.SessionBuckets {
			n += len(bk.SessionIDs)
		}
		b.WriteString("Session Sets (" + strconv.Itoa(len(d.SessionBuckets)) + ")/(" + strconv.Itoa(n) + "):\n")
		for _, bk := range d.SessionBuckets {
			b.WriteString(strconv.Itoa(len(bk.SessionIDs)) + " expire at " + javaDate(bk.Expires, d.Location) + ":\n")
			for _, id := range slices.Sorted(slices.Values(bk.SessionIDs)) {
				b.WriteString("\t0x" + hex(id) + "\n")
			}
		}
	}
	b.WriteString("ephemeral nodes dump:\n")
	b.WriteString("Sessions with Ephemerals (" + strconv.Itoa(len(d.Ephemerals)) + "):\n")
	for _, id := range slices.Sorted(maps.Keys(d.Ephemerals)) {
		b.WriteString("0x" + hex(id) + ":\n")
		for _, p := range slices.Sorted(slices.Values(d.Ephemerals[id])) {
			b.WriteString("\t" + p + "\n")
		}
	}
	b.WriteString("Connections dump:\n")
	n := 0
	for _, bk := range d.ConnectionBuckets {
		n += len(bk.Conns)
	}
	b.WriteString("Connections Sets (" + strconv.Itoa(len(d.ConnectionBuckets)) + ")/(" + strconv.Itoa(n) + "):\n")
	for _, bk := range d.ConnectionBuckets {
		b.WriteString(strconv.Itoa(len(bk.Conns)) + " expire at " + javaDate(bk.Expires, d.Location) + ":\n")
		for _, c := range bk.Conns {
			b.WriteString("\tip: /" + c.Remote + " sessionId: 0x" + hex(c.SessionID) + "\n")
		}
	}
}

// formatHash writes the digest history as DigestCommand does: one
// "<zxid in hex>: <digest>" line per entry.
func formatHash(b *strings.Builder, src Source) {
	for _, d := range src.DigestLog() {
		b.WriteString(hex(d.Zxid) + ": " + itoa(d.Digest) + "\n")
	}
}
