package acl

import (
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
)

// IPID is the implicit id the server gives a connection from addr, spelled
// as Java's InetAddress.getHostAddress spells it, so the ids a client sees
// (whoAmI) are Apache's: an IPv4-mapped IPv6 address is shown as IPv4
// ("1.2.3.4"), IPv6 as eight uncompressed lower-case hex groups
// ("0:0:0:0:0:0:0:1"), with "%zone" appended when addr has a zone.
func IPID(addr netip.Addr) jute.Id {
	addr = addr.Unmap()
	if !addr.Is6() {
		return jute.Id{Scheme: SchemeIP, ID: addr.String()}
	}
	b := addr.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	if z := addr.Zone(); z != "" {
		sb.WriteByte('%')
		sb.WriteString(z)
	}
	return jute.Id{Scheme: SchemeIP, ID: sb.String()}
}

// ipAddr is an address as bytes: 4 of them for IPv4, 16 for IPv6.
type ipAddr struct {
	b [16]byte
	n int
}

// ipMatches mirrors Apache's IPAuthenticationProvider.matches: expr is
// "addr[/bits]", and id (the client's address) matches when its first bits
// bits equal expr's. Addresses of different families never match.
func ipMatches(id, expr string) bool {
	acl, bits, ok := parseIPExpr(expr)
	if !ok {
		return false
	}
	if i := strings.IndexByte(id, '%'); i >= 0 && strings.IndexByte(id, ':') >= 0 {
		id = id[:i] // the zone of an IPv6 client address takes no part
	}
	client, ok := parseAddr(id)
	if !ok || client.n != acl.n {
		return false
	}
	mask(&acl, bits)
	mask(&client, bits)
	return acl == client
}

// parseIPExpr parses an ip ACL expression "addr[/bits]" as Apache does:
// the text after the first '/' must be a Java int in [0, address bits];
// without it the whole address must match.
func parseIPExpr(expr string) (ipAddr, int, bool) {
	addrPart, bitsPart, hasBits := strings.Cut(expr, "/")
	a, ok := parseAddr(addrPart)
	if !ok {
		return ipAddr{}, 0, false
	}
	bits := a.n * 8
	if hasBits {
		v, ok := javaParseInt(bitsPart)
		if !ok || v < 0 || v > a.n*8 {
			return ipAddr{}, 0, false
		}
		bits = v
	}
	if a.n == 16 && bits >= 96 && netip.AddrFrom16(a.b).Is4In6() {
		// Client ids of IPv4-mapped addresses are spelled as IPv4 (IPID),
		// so "::ffff:a.b.c.d/n" means a.b.c.d/(n-96).
		v4 := ipAddr{n: 4}
		copy(v4.b[:], a.b[12:])
		return v4, bits - 96, true
	}
	return a, bits, true
}

// parseAddr parses an address for ACL purposes. Text with a colon is IPv6
// without a zone; anything else is IPv4 as Apache 3.8 reads it: exactly four
// dot-separated Java ints, each in [0, 255], so "010.0.0.1" is 10.0.0.1 and
// "+1.-0.0.1" is 1.0.0.1. Apache 3.8 has no IPv6 ACLs at all (its
// v6 parser is a TODO, so it rejects them as invalid); Zoo accepts them.
func parseAddr(s string) (ipAddr, bool) {
	if strings.IndexByte(s, ':') >= 0 {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" || !a.Is6() {
			return ipAddr{}, false
		}
		return ipAddr{b: a.As16(), n: 16}, true
	}
	if strings.Count(s, ".") != 3 {
		return ipAddr{}, false // Java: s.split("\\.", -1).length != 4
	}
	out := ipAddr{n: 4}
	for i := range 4 {
		part, rest, _ := strings.Cut(s, ".")
		v, ok := javaParseInt(part)
		if !ok || v < 0 || v > 255 {
			return ipAddr{}, false
		}
		out.b[i] = byte(v)
		s = rest
	}
	return out, true
}

// javaParseInt accepts what Java's Integer.parseInt(s) accepts for ASCII
// input: an optional sign, then one or more decimal digits, within int32.
// (Java also accepts non-ASCII Unicode digits; Zoo does not.)
func javaParseInt(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	v := int64(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > math.MaxInt32+1 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, false
	}
	return int(v), true
}

// mask clears every bit of a after the first bits.
func mask(a *ipAddr, bits int) {
	for i := 0; i < a.n; i++ {
		switch {
		case bits >= 8:
			bits -= 8
		case bits <= 0:
			a.b[i] = 0
		default:
			a.b[i] &= ^byte(0xff >> bits)
			bits = 0
		}
	}
}
