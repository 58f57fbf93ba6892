package audit

import (
	"fmt"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
)

// ACLString renders an ACL as Apache's ZKUtil.aclToString:
// "scheme:id:perms" joined by commas, perms in the order cdrwa.
func ACLString(acls []jute.ACL) string {
	parts := make([]string, len(acls))
	for i, a := range acls {
		parts[i] = a.ID.Scheme + ":" + a.ID.ID + ":" + permString(a.Perms)
	}
	return strings.Join(parts, ",")
}

func permString(p int32) string {
	var b strings.Builder
	for _, x := range []struct {
		bit int32
		c   byte
	}{{jute.PermCreate, 'c'}, {jute.PermDelete, 'd'}, {jute.PermRead, 'r'}, {jute.PermWrite, 'w'}, {jute.PermAdmin, 'a'}} {
		if p&x.bit != 0 {
			b.WriteByte(x.c)
		}
	}
	return b.String()
}

// CreateMode names a create flag as Apache's audit log does:
// CreateMode.toString() in lower case.
func CreateMode(flags int32) string {
	switch flags {
	case jute.FlagPersistent:
		return "persistent"
	case jute.FlagEphemeral:
		return "ephemeral"
	case jute.FlagPersistentSequential:
		return "persistent_sequential"
	case jute.FlagEphemeralSequential:
		return "ephemeral_sequential"
	case jute.FlagContainer:
		return "container"
	case jute.FlagPersistentWithTTL:
		return "persistent_with_ttl"
	case jute.FlagPersistentSequentialWithTTL:
		return "persistent_sequential_with_ttl"
	}
	return fmt.Sprintf("unknown(%d)", flags)
}

// Users renders a session's ids as Apache's AuditHelper names its users,
// in Apache's set order (JavaSetOrder): each id's user name (the user part of a digest id, the id itself for
// ip, sasl and x509), comma-separated; super and unknown schemes name no
// user.
func Users(ids []jute.Id) string {
	var users []string
	for _, id := range JavaSetOrder(ids) {
		switch id.Scheme {
		case "digest":
			u, _, _ := strings.Cut(id.ID, ":")
			users = append(users, u)
		case "ip", "sasl", "x509":
			users = append(users, id.ID)
		}
	}
	return strings.Join(users, ",")
}

// Session renders a session id as Apache does ("0x" + Long.toHexString).
func Session(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// JavaSetOrder returns ids in the order Apache iterates a connection's
// auth info, a set backed by a ConcurrentHashMap: by hash bin
// ((h ^ h>>>16) & (n-1) over a table of n = 16 bins, doubled while the
// set holds more than three quarters of them), then in insertion order
// within a bin. Apache's audit log lists a session's users in this order.
// (For sets large enough to have resized, the order within a bin may
// differ from Java's; such sets are rare.)
func JavaSetOrder(ids []jute.Id) []jute.Id {
	n := 16
	for len(ids) > n*3/4 {
		n *= 2
	}
	bins := make([][]jute.Id, n)
	for _, id := range ids {
		h := idHash(id)
		i := int((h ^ int32(uint32(h)>>16)) & 0x7fffffff & int32(n-1))
		bins[i] = append(bins[i], id)
	}
	out := make([]jute.Id, 0, len(ids))
	for _, b := range bins {
		out = append(out, b...)
	}
	return out
}

// idHash is the jute-generated Id.hashCode.
func idHash(id jute.Id) int32 {
	r := int32(17)
	r = 37*r + javaStringHash(id.Scheme)
	return 37*r + javaStringHash(id.ID)
}

// javaStringHash is String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xd800+(r>>10))
			h = 31*h + int32(0xdc00+(r&0x3ff))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
