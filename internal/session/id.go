package session

import "math"

// containerOwner is the ephemeralOwner value Apache reserves to mark
// container nodes (EphemeralType.CONTAINER_EPHEMERAL_OWNER, Long.MIN_VALUE).
// A session id must never take it, or the session's ephemerals would look
// like containers.
const containerOwner = math.MinInt64

// InitialID returns the first session id a server hands out, built as
// Apache 3.8's SessionTrackerImpl.initializeNextSessionId builds it: the
// server id in the top byte, the low 40 bits of the clock in the next five
// bytes, and two zero bytes at the bottom for the counter.
//
// The shift right is unsigned (ZOOKEEPER-1622): with a signed shift the
// clock's top bit would smear ones into the server-id byte, so two servers
// could hand out overlapping ids. The result is bumped by one if it would
// equal the container marker (Long.MIN_VALUE), which happens only for server
// id 128 with a clock whose low 40 bits are zero.
//
// Apache 3.8 feeds it the monotonic elapsed time; Zoo passes wall-clock ms,
// which is what 3.4 did and keeps ids distinct across restarts.
func InitialID(serverID int64, nowMs int64) int64 {
	id := int64(uint64(nowMs<<24)>>8) | serverID<<56
	if id == containerOwner {
		id++
	}
	return id
}

// IDGen hands out session ids: InitialID, then successive values. It is not
// safe for concurrent use.
type IDGen struct {
	next int64
}

// NewIDGen returns a generator starting at InitialID(serverID, nowMs).
func NewIDGen(serverID int64, nowMs int64) *IDGen {
	return &IDGen{next: InitialID(serverID, nowMs)}
}

// Next returns a fresh session id. It skips 0 (no session) and the container
// marker, which Apache's getAndIncrement could reach only after 2^56 ids.
func (g *IDGen) Next() int64 {
	for g.next == 0 || g.next == containerOwner {
		g.next++
	}
	id := g.next
	g.next++
	return id
}
