package acl

import (
	"net/netip"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// FuzzIP feeds arbitrary ip ACL expressions and client ids through Fixup and
// Check. Neither may panic, and what Fixup accepts must behave sanely: an
// accepted expression with /0 matches every client of its family, and an
// expression always matches the client at its own address.
func FuzzIP(f *testing.F) {
	for _, s := range []string{
		"1.2.3.4", "1.2.3.4/32", "0.0.0.0/0", "10.0.0.0/8", "+1.-0.0.1/+8", "1.2.3.4/33",
		"::1", "fe80::/10", "::ffff:1.2.3.4/96", "1.2.3", "/", ":", "1.2.3.4/2147483648", "%",
	} {
		f.Add(s, "127.0.0.1")
		f.Add(s, "0:0:0:0:0:0:0:1")
	}
	f.Fuzz(func(t *testing.T, expr, client string) {
		acls := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: SchemeIP, ID: expr}}}
		ids := []jute.Id{{Scheme: SchemeIP, ID: client}}
		_ = Check(acls, jute.PermRead, ids)
		fixed, err := Fixup(acls, ids)
		if err != nil {
			return
		}
		if len(fixed) != 1 || fixed[0] != acls[0] {
			t.Fatalf("Fixup(%q) = %v", expr, fixed)
		}
		a, bits, ok := parseIPExpr(expr)
		if !ok {
			t.Fatalf("Fixup accepted %q but parseIPExpr rejects it", expr)
		}
		self := IPID(netip.AddrFrom16(a.b))
		if a.n == 4 {
			self = IPID(netip.AddrFrom4([4]byte(a.b[:4])))
		}
		if !Check(acls, jute.PermRead, []jute.Id{self}) {
			t.Fatalf("%q does not match its own address %v", expr, self)
		}
		if bits == 0 {
			other := jute.Id{Scheme: SchemeIP, ID: "255.255.255.255"}
			if a.n == 16 {
				other.ID = "ffff::"
			}
			if !Check(acls, jute.PermRead, []jute.Id{other}) {
				t.Fatalf("%q (/0) does not match %v", expr, other)
			}
		}
	})
}

// FuzzFixupCheck runs Fixup and Check on one arbitrary entry.
func FuzzFixupCheck(f *testing.F) {
	f.Add(int32(31), "digest", "a:b", "digest", "a:b", int32(1))
	f.Add(int32(31), "auth", "", "digest", "a:b", int32(2))
	f.Add(int32(1), "world", "anyone", "ip", "1.2.3.4", int32(1))
	f.Fuzz(func(t *testing.T, perms int32, scheme, id, idScheme, idID string, perm int32) {
		ids := []jute.Id{{Scheme: idScheme, ID: idID}}
		acls := []jute.ACL{{Perms: perms, ID: jute.Id{Scheme: scheme, ID: id}}}
		_ = Check(acls, perm, ids)
		fixed, err := Fixup(acls, ids)
		if err != nil {
			return
		}
		for _, a := range fixed {
			if a.ID.Scheme == SchemeAuth {
				t.Fatalf("Fixup left an auth entry: %v", fixed)
			}
		}
		// What the creator asked for with auth, it gets.
		if scheme == SchemeAuth && perms&perm != 0 && !Check(fixed, perm, ids) {
			t.Fatalf("creator %v denied perm %d on %v", ids, perm, fixed)
		}
		_ = Redact(fixed)
	})
}
