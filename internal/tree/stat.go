package tree

import (
	"math"

	"github.com/zoohq/zoo/internal/jute"
)

// StatPersisted is the stat a node keeps (Apache's StatPersisted). The
// reported jute.Stat is derived from it by Report.
type StatPersisted struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32 // creates of children only; see Report
	Aversion       int32
	EphemeralOwner int64 // session id, ContainerOwner, TTLOwner(ttl) or 0
	Pzxid          int64
}

// Report returns the stat a client sees for a node with this persisted
// stat, numChildren children and dataLen bytes of data
// (DataNode.copyStat). The arithmetic wraps in int32 as Java's does.
func (s *StatPersisted) Report(numChildren, dataLen int32) jute.Stat {
	return jute.Stat{
		Czxid:          s.Czxid,
		Mzxid:          s.Mzxid,
		Ctime:          s.Ctime,
		Mtime:          s.Mtime,
		Version:        s.Version,
		Cversion:       s.Cversion*2 - numChildren,
		Aversion:       s.Aversion,
		EphemeralOwner: ClientOwner(s.EphemeralOwner),
		DataLength:     dataLen,
		NumChildren:    numChildren,
		Pzxid:          s.Pzxid,
	}
}

// Kind is what a node's ephemeral owner says it is (Apache's
// EphemeralType).
type Kind uint8

// The kinds of node.
const (
	Persistent Kind = iota // owner 0 (EphemeralType.VOID)
	Ephemeral              // owner is a session id (NORMAL)
	Container              // owner is ContainerOwner
	TTL                    // owner is TTLOwner(ttl)
)

func (k Kind) String() string {
	switch k {
	case Persistent:
		return "persistent"
	case Ephemeral:
		return "ephemeral"
	case Container:
		return "container"
	case TTL:
		return "ttl"
	}
	return "kind?"
}

// Special ephemeral owners (EphemeralType). A session id never takes these
// forms: the session package must not issue ids whose top byte is 0xff, nor
// math.MinInt64, nor 0.
const (
	// ContainerOwner marks a container node (CONTAINER_EPHEMERAL_OWNER).
	ContainerOwner int64 = math.MinInt64

	// MaxTTL is the largest TTL in ms a TTL node may have: the 40 bits of
	// an extended owner left after its type bits (about 34 years).
	MaxTTL int64 = 1<<40 - 1

	extendedMask = -1 << 56 // 0xff00000000000000: top byte set
)

// TTLOwner returns the ephemeral owner that marks a TTL node with the
// given TTL in ms: 0xff in the top byte, the TTL feature bits (zero) in
// the next two, the TTL in the low 40 bits. The caller validates ttl
// (0 < ttl <= MaxTTL); out-of-range bits are masked off.
func TTLOwner(ttl int64) int64 { return extendedMask | ttl&MaxTTL }

// KindOf classifies an ephemeral owner. Any owner with the top byte 0xff
// is treated as a TTL node; Apache refuses other extended features, and
// prep never produces them.
func KindOf(owner int64) Kind {
	switch {
	case owner == 0:
		return Persistent
	case owner == ContainerOwner:
		return Container
	case owner&extendedMask == extendedMask:
		return TTL
	}
	return Ephemeral
}

// TTLOf returns the TTL in ms of a TTL node's owner, or 0 for any other.
func TTLOf(owner int64) int64 {
	if KindOf(owner) != TTL {
		return 0
	}
	return owner & MaxTTL
}

// ClientOwner is the ephemeralOwner reported to clients: the session for an
// ephemeral node, 0 for every other kind (DataNode.getClientEphemeralOwner).
func ClientOwner(owner int64) int64 {
	if KindOf(owner) != Ephemeral {
		return 0
	}
	return owner
}
