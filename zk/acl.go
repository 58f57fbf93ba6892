package zk

import (
	"crypto/sha1"
	"encoding/base64"

	"github.com/zoohq/zoo/internal/jute"
)

// Permission bits of an ACL entry (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0 // read data and list children
	PermWrite  int32 = 1 << 1 // set data
	PermCreate int32 = 1 << 2 // create children
	PermDelete int32 = 1 << 3 // delete children
	PermAdmin  int32 = 1 << 4 // set the ACL
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// ACL is one entry of a znode's access control list: Perms granted to the
// identity ID in Scheme ("world", "auth", "digest", "ip", ...).
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

// WorldACL grants perms to everyone (world:anyone).
func WorldACL(perms int32) []ACL {
	return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}}
}

// OpenACLUnsafe grants every permission to everyone (Ids.OPEN_ACL_UNSAFE).
func OpenACLUnsafe() []ACL { return WorldACL(PermAll) }

// ReadACLUnsafe lets everyone read (Ids.READ_ACL_UNSAFE).
func ReadACLUnsafe() []ACL { return WorldACL(PermRead) }

// CreatorAllACL grants every permission to the identities the creating
// session has authenticated as (Ids.CREATOR_ALL_ACL, auth scheme). A
// session with no credentials gets InvalidACL for it.
func CreatorAllACL() []ACL { return AuthACL(PermAll) }

// AuthACL grants perms to the identities of the session that sets the ACL
// (the "auth" scheme, which the server expands).
func AuthACL(perms int32) []ACL {
	return []ACL{{Perms: perms, Scheme: "auth", ID: ""}}
}

// DigestACL grants perms to the user who authenticates with
// AddAuth(ctx, "digest", []byte(user+":"+password)).
func DigestACL(perms int32, user, password string) []ACL {
	return []ACL{{Perms: perms, Scheme: "digest", ID: Digest(user, password)}}
}

// IPACL grants perms to clients connecting from addr, an IP address or a
// CIDR block ("10.0.0.0/8").
func IPACL(perms int32, addr string) []ACL {
	return []ACL{{Perms: perms, Scheme: "ip", ID: addr}}
}

// Digest returns the digest scheme's identity for user and password:
// "user:" + base64(sha1("user:password")), as the server computes it.
func Digest(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

func toJuteACL(acl []ACL) []jute.ACL {
	out := make([]jute.ACL, len(acl))
	for i, a := range acl {
		out[i] = jute.ACL{Perms: a.Perms, ID: jute.Id{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

func fromJuteACL(acl []jute.ACL) []ACL {
	if acl == nil {
		return nil
	}
	out := make([]ACL, len(acl))
	for i, a := range acl {
		out[i] = ACL{Perms: a.Perms, Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return out
}

// Stat is a znode's metadata (org.apache.zookeeper.data.Stat).
type Stat struct {
	Czxid          int64 // zxid of the change that created the znode
	Mzxid          int64 // zxid of the change that last set its data
	Ctime          int64 // ms since the epoch when the znode was created
	Mtime          int64 // ms since the epoch when its data last changed
	Version        int32 // number of changes to its data
	Cversion       int32 // number of changes to its children
	Aversion       int32 // number of changes to its ACL
	EphemeralOwner int64 // session id of the owner of an ephemeral node, else 0
	DataLength     int32 // length of its data
	NumChildren    int32 // number of children
	Pzxid          int64 // zxid of the change that last changed its children
}

func fromJuteStat(s *jute.Stat) Stat { return Stat(*s) }
