package sim

import "github.com/zoohq/zoo/internal/jute"

// identity is who a client is authenticated as, fixed per client. The
// ACL of each key is fixed by its path (keyACL): every create of a key
// carries it. So whether a client may do an operation on a key is a pure
// function of (identity, key, operation), which the linearizability
// model can say (allowed) without tracking ACLs as state.
type identity uint8

const (
	idSuper identity = iota // the super user: every check passes (reconfig needs it)
	idOwner                 // digest alice: the owner of the guarded keys
	idOther                 // digest bob: neither
)

func (id identity) String() string { return [...]string{"super", "alice", "bob"}[id] }

// identities are the connections' ids, as after addauth digest
// alice:alice-pw (or bob:bob-pw): the user and the base64 SHA-1 of
// "user:password", as Apache's DigestAuthenticationProvider makes them.
var identities = [...][]jute.Id{
	idSuper: {{Scheme: "super", ID: "super"}},
	idOwner: {{Scheme: "digest", ID: "alice:SQICbGEP3vUd4FffsXSLZ8/1XtI="}},
	idOther: {{Scheme: "digest", ID: "bob:EXcpcQQk6JBIDFnxSqkpDLIhkxw="}},
}

// clientIdentity is client i's identity: two super users (one sends the
// reconfigs), the owner and another user.
func clientIdentity(i int) identity {
	return [...]identity{idSuper, idOwner, idOther, idSuper}[i%4]
}

// The guarded keys: /k1 only its owner may read or write; /k2 anyone may
// read, only its owner write. /k0 is open. The root is open, so anyone
// may create or delete any key (create and delete check the parent).
const (
	keyOwnerOnly = 1
	keyReadOnly  = 2
)

var (
	ownerAll   = jute.ACL{Perms: jute.PermAll, ID: identities[idOwner][0]}
	anyoneRead = jute.ACL{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}
)

// keyACL is the ACL every create of key k carries.
func keyACL(k int) []jute.ACL {
	switch k {
	case keyOwnerOnly:
		return []jute.ACL{ownerAll}
	case keyReadOnly:
		return []jute.ACL{ownerAll, anyoneRead}
	}
	return openACL
}

// allowed reports whether identity id has perm on key k's node.
func allowed(id identity, k int, perm int32) bool {
	switch {
	case id == idSuper || id == idOwner:
		return true
	case k == keyOwnerOnly:
		return false
	case k == keyReadOnly:
		return perm == jute.PermRead
	}
	return true
}

// readable reports whether identity id may read the node at path: the
// server withholds the watch events of nodes a watcher may not read.
// Only the keys are guarded; every other node the clients make is open.
func readable(id identity, path string) bool {
	for k := range nKeys {
		if path == keyPath(k) {
			return allowed(id, k, jute.PermRead)
		}
	}
	return true
}
