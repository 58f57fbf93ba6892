package tree

import "slices"

// ContainersToDelete returns, sorted, the container nodes that have had a
// child and now have none: stored cversion > 0 (some child was created)
// and no children. A new, never-used container is kept, so that creating
// it just before a cleaning pass does not lose it (Apache 3.8
// ContainerManager.getCandidates, with maxNeverUsedIntervalMs at its
// default 0).
func (t *Tree) ContainersToDelete() []string {
	var out []string
	for id := range t.containers {
		if n := t.nodes.at(id); n.stat.Cversion > 0 && n.numKids == 0 {
			out = append(out, t.pathOf(id))
		}
	}
	slices.Sort(out)
	return out
}

// ExpiredTTL returns, sorted, the TTL nodes with no children that were
// last modified more than their TTL ago: now - mtime > ttl
// (ContainerManager.getCandidates). now is ms since the epoch, on the same
// clock as the txn times that set mtime.
func (t *Tree) ExpiredTTL(now int64) []string {
	var out []string
	for id := range t.ttls {
		n := t.nodes.at(id)
		if n.numKids > 0 {
			continue
		}
		if ttl := TTLOf(n.stat.EphemeralOwner); ttl != 0 && now-n.stat.Mtime > ttl {
			out = append(out, t.pathOf(id))
		}
	}
	slices.Sort(out)
	return out
}
