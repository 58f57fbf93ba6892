package acl

import "github.com/zoohq/zoo/internal/jute"

// JavaSetOrder returns ids in the order Apache iterates a connection's
// auth info, a set backed by a ConcurrentHashMap: by hash bin
// ((h ^ h>>>16) & (n-1) over a table of n = 16 bins, doubled while the
// set holds more than three quarters of them), then in insertion order
// within a bin. whoAmI, the expansion of an auth ACL entry and the audit
// log's user list follow this order in Apache.
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
