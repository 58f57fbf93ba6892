package tree

import (
	"slices"
	"strconv"
	"strings"
)

// Quotas are kept as Apache keeps them: a quota on /p is the node
// /zookeeper/quota/p/zookeeper_limits, whose data is a StatsTrack string of
// limits ("count=10,bytes=-1", and since 3.7 also
// "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2"), beside
// /zookeeper/quota/p/zookeeper_stats, whose data the tree keeps current
// ("count=2,bytes=5": the nodes in /p's subtree, /p included, and the sum
// of their data lengths). zkCli's setquota creates both nodes; creating the
// limits node arms the quota and creating the stats node recounts the
// subtree (DataTree.createNode, updateQuotaForPath).
const (
	LimitNode = "zookeeper_limits"
	StatNode  = "zookeeper_stats"
)

// LimitPath and StatPath return the quota nodes of path (Quotas.limitPath,
// Quotas.statPath).
func LimitPath(path string) string { return QuotaPath + path + "/" + LimitNode }

// StatPath returns the node that tracks the usage of path's quota.
func StatPath(path string) string { return QuotaPath + path + "/" + StatNode }

// quotaNodeCreated arms a quota when its limits node appears and recounts
// its subtree when its stats node appears.
func (t *Tree) quotaNodeCreated(parent, name string) {
	if !strings.HasPrefix(parent, QuotaPath) {
		return
	}
	quoted := parent[len(QuotaPath):]
	switch name {
	case LimitNode:
		t.quotas[quoted] = struct{}{}
	case StatNode:
		t.recountQuota(quoted)
	}
}

// quotaNodeDeleted disarms a quota whose limits node is deleted.
func (t *Tree) quotaNodeDeleted(parent, name string) {
	if name == LimitNode && strings.HasPrefix(parent, QuotaPath) {
		delete(t.quotas, parent[len(QuotaPath):])
	}
}

// quotaPrefix returns the deepest path with a quota that is path or one of
// its ancestors (PathTrie.findMaxPrefix). The root never has a quota
// (DataTree.getMaxPrefixWithQuota).
// UnderQuota reports whether path lies under a node that has a quota.
func (t *Tree) UnderQuota(path string) bool {
	_, ok := t.quotaPrefix(path)
	return ok
}

func (t *Tree) quotaPrefix(path string) (string, bool) {
	if len(t.quotas) == 0 {
		return "", false
	}
	for p := path; p != Root && p != ""; {
		if _, ok := t.quotas[p]; ok {
			return p, true
		}
		parent, _, ok := Split(p)
		if !ok {
			break
		}
		p = parent
	}
	return "", false
}

// updateQuota adds a change under path to the stats node of the quota
// that covers it (DataTree.updateQuotaStat). The stats node's data changes
// but not its stat, and no watch fires, as in Apache.
func (t *Tree) updateQuota(path string, bytesDiff, countDiff int64) {
	prefix, ok := t.quotaPrefix(path)
	if !ok {
		return
	}
	statPath := StatPath(prefix)
	id := t.lookup(statPath)
	if id == 0 {
		return // Apache logs "Missing node for stat" and goes on
	}
	st := parseStats(t.bufs.data(t.nodes.at(id)))
	st.set(statCount, st.get(statCount)+countDiff)
	st.set(statBytes, st.get(statBytes)+bytesDiff)
	t.replaceData(statPath, id, st.bytes())
}

// recountQuota sets the stats node of path's quota to a fresh count of
// path's subtree (DataTree.updateQuotaForPath).
func (t *Tree) recountQuota(path string) {
	statPath := StatPath(path)
	sn := t.lookup(statPath)
	if sn == 0 {
		return
	}
	var count, bytes int64
	if id := t.lookup(path); id != 0 {
		count, bytes = t.subtreeUsage(id)
	}
	st := stats{}
	st.set(statCount, count)
	st.set(statBytes, bytes)
	t.replaceData(statPath, sn, st.bytes())
}

func (t *Tree) subtreeUsage(id nodeID) (count, bytes int64) {
	n := t.nodes.at(id)
	count, bytes = 1, int64(n.dataLength())
	for c := n.firstChild; c != 0; c = t.nodes.at(c).next {
		cc, cb := t.subtreeUsage(c)
		count += cc
		bytes += cb
	}
	return count, bytes
}

// replaceData swaps a node's data without touching its stat.
func (t *Tree) replaceData(path string, id nodeID, data []byte) {
	t.touch(id)
	n := t.nodes.at(id)
	t.dataSize += int64(len(data) - n.dataLength())
	t.undigest(n)
	t.setData(id, data)
	t.redigest(path, n)
}

// QuotaOverrun is a quota that a change would take past its limit
// (ZooKeeperServer.checkQuota).
type QuotaOverrun struct {
	Prefix string // the path the quota is set on
	Count  bool   // the node count (else the byte count) overruns
	Hard   bool   // a hard limit (countHardLimit, byteHardLimit)
	Value  int64  // the count or bytes after the change
	Limit  int64
}

// CheckQuota reports the limits that adding countDiff nodes and bytesDiff
// bytes under path would overrun, judged against the committed tree as
// Apache's ZooKeeperServer.checkQuota judges them: where a hard limit is
// set only it is checked, else the soft limit; a limit of -1 is none. The
// caller refuses a change that overruns a hard limit (if it enforces
// quotas) and logs the rest; the tree logs nothing.
func (t *Tree) CheckQuota(path string, bytesDiff, countDiff int64) []QuotaOverrun {
	prefix, ok := t.quotaPrefix(path)
	if !ok {
		return nil
	}
	ln := t.get(LimitPath(prefix))
	if ln == nil {
		return nil
	}
	limits := parseStats(t.bufs.data(ln))
	checkCount := countDiff != 0 && (limits.get(statCount) > -1 || limits.get(statCountHard) > -1)
	checkBytes := bytesDiff != 0 && (limits.get(statBytes) > -1 || limits.get(statByteHard) > -1)
	if !checkCount && !checkBytes {
		return nil
	}
	sn := t.get(StatPath(prefix))
	if sn == nil {
		return nil
	}
	cur := parseStats(t.bufs.data(sn))
	var out []QuotaOverrun
	if checkCount {
		out = overrun(out, prefix, true, cur.get(statCount)+countDiff, limits.get(statCount), limits.get(statCountHard))
	}
	if checkBytes {
		out = overrun(out, prefix, false, cur.get(statBytes)+bytesDiff, limits.get(statBytes), limits.get(statByteHard))
	}
	return out
}

func overrun(out []QuotaOverrun, prefix string, count bool, value, soft, hard int64) []QuotaOverrun {
	limit, isHard := soft, hard > -1
	if isHard {
		limit = hard
	}
	if value > limit {
		out = append(out, QuotaOverrun{Prefix: prefix, Count: count, Hard: isHard, Value: value, Limit: limit})
	}
	return out
}

// The keys of a StatsTrack string.
const (
	statCount     = "count"
	statBytes     = "bytes"
	statCountHard = "countHardLimit"
	statByteHard  = "byteHardLimit"
)

// stats is a parsed StatsTrack: key=value pairs, a missing key reading -1.
type stats map[string]int64

// parseStats parses "k1=v1,k2=v2;k3=v3" with ',' or ';' between pairs and
// an empty value read as -1 (StatsTrack(String)). Java's parser throws on
// a pair without "=" or a value that is not a number; such a pair is
// skipped here. Like Java's String.split, trailing empty pieces are
// dropped, so "bytes=5=" reads bytes 5.
func parseStats(data []byte) stats {
	st := stats{}
	pairs := strings.FieldsFunc(string(data), func(r rune) bool { return r == ',' || r == ';' })
	for _, pair := range pairs {
		kv := strings.Split(pair, "=")
		for len(kv) > 0 && kv[len(kv)-1] == "" {
			kv = kv[:len(kv)-1]
		}
		if len(kv) < 2 {
			continue
		}
		if kv[1] == "" {
			st[kv[0]] = -1
			continue
		}
		if v, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
			st[kv[0]] = v
		}
	}
	return st
}

func (st stats) get(key string) int64 {
	if v, ok := st[key]; ok {
		return v
	}
	return -1
}

func (st stats) set(key string, v int64) { st[key] = v }

// bytes formats st as StatsTrack.toString does: count and bytes first,
// then, if there are other keys, a spurious "=" (so parsers before 3.5
// ignore them) and ";key=value" for each in sorted order.
func (st stats) bytes() []byte {
	b := make([]byte, 0, 32)
	b = append(b, statCount+"="...)
	b = strconv.AppendInt(b, st.get(statCount), 10)
	b = append(b, ","+statBytes+"="...)
	b = strconv.AppendInt(b, st.get(statBytes), 10)
	var rest []string
	for k := range st {
		if k != statCount && k != statBytes {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		return b
	}
	slices.Sort(rest)
	b = append(b, '=')
	for _, k := range rest {
		b = append(b, ';')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, st[k], 10)
	}
	return b
}
