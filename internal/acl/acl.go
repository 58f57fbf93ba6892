// Package acl decides who may do what to a znode, the way Apache ZooKeeper
// 3.8 does: checking a node's ACL against a session's ids (Check),
// validating and expanding the ACL of a create or setACL request (Fixup),
// and turning an auth packet into ids (Authenticate).
//
// An id is a (scheme, id) pair. The schemes Zoo knows:
//
//	world   "anyone" is everyone; the only valid world id.
//	auth    only in requests: "every id this session has authenticated as".
//	        Fixup replaces it, so it never appears in a stored ACL.
//	digest  "user:base64(sha1(user:password))", see Digest.
//	ip      "addr[/bits]", matched against the connection's address.
//	        The server gives every connection the id IPID(remote address).
//	x509    a certificate's distinguished name, matched exactly.
//	sasl    the name a SASL exchange authenticated ("bob", or a Kerberos
//	        principal such as "zk/host@REALM"), matched exactly; the sasl
//	        id "super" matches every sasl entry, as in Apache's
//	        SASLAuthenticationProvider.
//	super   never in an ACL: a session holding any super id passes every
//	        check (digest auth with the configured super password gives it).
//
// The package is pure: no I/O, no clock, no goroutines.
package acl

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zoohq/zoo/internal/jute"
)

// Scheme names.
const (
	SchemeWorld  = "world"
	SchemeAuth   = "auth"
	SchemeDigest = "digest"
	SchemeIP     = "ip"
	SchemeX509   = "x509"
	SchemeSuper  = "super"
	SchemeSASL   = "sasl"
)

// Anyone is the id that matches every session (ZooDefs.Ids.ANYONE_ID_UNSAFE).
var Anyone = jute.Id{Scheme: SchemeWorld, ID: "anyone"}

// Check reports whether ids may perform an operation needing perm on a node
// whose ACL is acls, with Apache's ZooKeeperServer.checkACL semantics:
//
//   - an empty or nil ACL allows everything;
//   - a session holding an id of scheme "super" passes;
//   - otherwise some entry must share at least one bit with perm
//     ((entry.Perms & perm) != 0) and match one of ids: world:anyone matches
//     everyone, digest and x509 entries match an id of the same scheme with
//     the identical id string, ip entries match an ip id whose address lies
//     inside the entry's addr/bits.
//
// perm is normally a single bit. When it has several, any one of them is
// enough: getACL asks for PermRead|PermAdmin and is allowed with either.
// A perm of 0 fails unless the ACL is empty or the session is super.
func Check(acls []jute.ACL, perm int32, ids []jute.Id) bool {
	if len(acls) == 0 {
		return true
	}
	for _, id := range ids {
		if id.Scheme == SchemeSuper {
			return true
		}
	}
	for _, a := range acls {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID == Anyone {
			return true
		}
		for _, id := range ids {
			if id.Scheme == a.ID.Scheme && matches(a.ID.Scheme, id.ID, a.ID.ID) {
				return true
			}
		}
	}
	return false
}

// matches reports whether a session id (of scheme) satisfies an ACL
// expression of the same scheme. Schemes without a matcher never match,
// as in Apache, where a scheme without an authentication provider matches
// nothing.
func matches(scheme, id, expr string) bool {
	switch scheme {
	case SchemeDigest, SchemeX509:
		return id == expr
	case SchemeIP:
		return ipMatches(id, expr)
	case SchemeSASL:
		return id == expr || id == "super"
	}
	return false
}

// Fixup validates the ACL of a create or setACL request and expands its
// "auth" entries, as Apache's PrepRequestProcessor.fixupACL does. ids are
// the session's ids. The result is a new slice; acls is not modified.
//
//   - exact duplicate entries are dropped first, keeping the first;
//   - an empty or nil list is invalid;
//   - world must be world:anyone;
//   - auth:<anything> becomes one entry with the same perms for each of ids
//     whose scheme is an authenticated one (digest, x509); ip and super ids
//     are not used. With no such id the entry is invalid. The expansion is
//     not deduplicated again (Apache does not either);
//   - digest ids must look like "user:hash" (exactly two non-empty-tailed
//     colon-separated fields, Java String.split semantics);
//   - ip ids must parse as "addr[/bits]" (IPv4 as Apache parses it, or IPv6);
//   - x509 ids must be non-empty;
//   - any other scheme is invalid.
//
// Perms are not validated: Apache stores any int, including 0.
// Every failure wraps jute.InvalidACL.
func Fixup(acls []jute.ACL, ids []jute.Id) ([]jute.ACL, error) {
	uniq := dedup(acls)
	if len(uniq) == 0 {
		return nil, fmt.Errorf("acl: empty ACL: %w", jute.InvalidACL)
	}
	out := make([]jute.ACL, 0, len(uniq))
	for _, a := range uniq {
		if a.ID.Scheme == SchemeAuth {
			n := len(out)
			out = appendAuthenticated(out, a.Perms, ids)
			if len(out) == n {
				return nil, fmt.Errorf("acl: auth scheme but session has no authenticated id: %w", jute.InvalidACL)
			}
			continue
		}
		if !validID(a.ID) {
			return nil, fmt.Errorf("acl: invalid id %s:%q: %w", a.ID.Scheme, a.ID.ID, jute.InvalidACL)
		}
		out = append(out, a)
	}
	return out, nil
}

// dedup returns acls without exact repeats, first occurrence kept. Most
// lists are a few entries long, and a scan of those allocates only the
// result; a long one (a request may carry tens of thousands) goes through
// a set, so a create's cost stays linear in its size: prep runs on the
// replica's loop, and a quadratic scan there stalled every other write.
func dedup(acls []jute.ACL) []jute.ACL {
	out := make([]jute.ACL, 0, len(acls))
	if len(acls) <= shortACL {
		for _, a := range acls {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out
	}
	seen := make(map[jute.ACL]struct{}, len(acls))
	for _, a := range acls {
		if _, dup := seen[a]; !dup {
			seen[a] = struct{}{}
			out = append(out, a)
		}
	}
	return out
}

// shortACL is the longest list dedup scans instead of hashing.
const shortACL = 16

// appendAuthenticated expands an auth entry: one entry per id of a scheme
// whose Apache provider reports isAuthenticated() == true, in the order
// Apache iterates the session's ids (JavaSetOrder).
func appendAuthenticated(out []jute.ACL, perms int32, ids []jute.Id) []jute.ACL {
	for _, id := range JavaSetOrder(ids) {
		switch id.Scheme {
		case SchemeDigest, SchemeX509, SchemeSASL:
			out = append(out, jute.ACL{Perms: perms, ID: id})
		}
	}
	return out
}

// validID reports whether id may be stored in an ACL.
func validID(id jute.Id) bool {
	switch id.Scheme {
	case SchemeWorld:
		return id.ID == "anyone"
	case SchemeDigest:
		return validDigestID(id.ID)
	case SchemeIP:
		_, _, ok := parseIPExpr(id.ID)
		return ok
	case SchemeX509:
		// Apache parses the id as an X.500 name, and only when the x509
		// provider is configured. Zoo accepts any non-empty name.
		return id.ID != ""
	case SchemeSASL:
		return validKerberosName(id.ID)
	}
	return false
}

// validKerberosName is SASLAuthenticationProvider.isValid: Apache's
// KerberosName accepts a name without '/' and '@', or one of the form
// service[/host]@REALM with no further '/' or '@'.
func validKerberosName(name string) bool {
	if !strings.ContainsAny(name, "/@") {
		return true
	}
	primary, realm, ok := strings.Cut(name, "@")
	if !ok || strings.Contains(realm, "@") || strings.Contains(realm, "/") {
		return false
	}
	_, host, _ := strings.Cut(primary, "/")
	return !strings.Contains(host, "/")
}

// validDigestID mirrors Apache's DigestAuthenticationProvider.isValid:
// id.split(":").length == 2. Java's split drops trailing empty fields, so
// "a:b:" is valid while "a:" and "a:b:c" are not.
func validDigestID(id string) bool {
	fields := 0
	pending := 0 // empty fields seen since the last non-empty one
	start := 0
	for i := 0; i <= len(id); i++ {
		if i < len(id) && id[i] != ':' {
			continue
		}
		if i == start {
			pending++
		} else {
			fields += pending + 1
			pending = 0
		}
		start = i + 1
	}
	return fields == 2
}

// Redact returns acls as getACL shows them to a session without ADMIN on
// the node: the hash of every digest id is replaced by "x" ("bob:x"), as
// Apache's FinalRequestProcessor does with replaceAll(":.*", ":x").
// acls is not modified.
func Redact(acls []jute.ACL) []jute.ACL {
	if acls == nil {
		return nil
	}
	out := make([]jute.ACL, len(acls))
	for i, a := range acls {
		if a.ID.Scheme == SchemeDigest {
			a.ID.ID = redactDigest(a.ID.ID)
		}
		out[i] = a
	}
	return out
}

// redactDigest applies Java's s.replaceAll(":.*", ":x"): from each colon
// to the end of its line becomes ":x" (Java's '.' stops at \n, \r, U+0085,
// U+2028 and U+2029). Bytes outside the redacted spans are kept as they are.
func redactDigest(s string) string {
	buf := make([]byte, 0, len(s))
	skipping := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
			skipping = false
			buf = append(buf, s[i:i+size]...)
		case skipping:
		case r == ':':
			buf = append(buf, ":x"...)
			skipping = true
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return string(buf)
}
