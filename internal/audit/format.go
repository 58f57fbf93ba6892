package audit

import (
	"fmt"
	"strings"

	"github.com/zoohq/zoo/internal/acl"
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
// in Apache's set order (acl.JavaSetOrder): each id's user name (the user part of a digest id, the id itself for
// ip, sasl and x509), comma-separated; super and unknown schemes name no
// user.
func Users(ids []jute.Id) string {
	var users []string
	for _, id := range acl.JavaSetOrder(ids) {
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
