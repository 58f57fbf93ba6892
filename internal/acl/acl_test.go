package acl

import (
	"errors"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

func digestID(s string) jute.Id { return jute.Id{Scheme: SchemeDigest, ID: s} }
func ipID(s string) jute.Id     { return jute.Id{Scheme: SchemeIP, ID: s} }
func entry(perms int32, scheme, id string) jute.ACL {
	return jute.ACL{Perms: perms, ID: jute.Id{Scheme: scheme, ID: id}}
}

var (
	alice    = digestID("alice:V55/p2T0OpjQ+low3NVAH4aLvm0=") // Digest("alice:pw"), observed on Apache 3.8
	bob      = digestID(Digest("bob:pw"))
	local    = ipID("127.0.0.1")
	superID  = jute.Id{Scheme: SchemeSuper}
	openACL  = []jute.ACL{{Perms: jute.PermAll, ID: Anyone}}
	aliceAll = []jute.ACL{{Perms: jute.PermAll, ID: alice}}
)

// Ref: programmer's guide, "ZooKeeper access control using ACLs" and
// "Builtin ACL Schemes"; Apache ZooKeeperServer.checkACL.
func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		acls []jute.ACL
		perm int32
		ids  []jute.Id
		want bool
	}{
		{"nil ACL allows all", nil, jute.PermAdmin, nil, true},
		{"empty ACL allows all", []jute.ACL{}, jute.PermWrite, nil, true},
		{"world anyone", openACL, jute.PermRead, nil, true},
		{"world anyone without the bit", []jute.ACL{entry(jute.PermRead, SchemeWorld, "anyone")}, jute.PermWrite, nil, false},
		{"world other id never matches", []jute.ACL{entry(jute.PermAll, SchemeWorld, "bob")}, jute.PermRead, []jute.Id{{Scheme: SchemeWorld, ID: "bob"}}, false},
		{"super passes anything", []jute.ACL{entry(0, SchemeDigest, "x:y")}, jute.PermAdmin, []jute.Id{local, superID}, true},
		{"super with a non-empty id passes", aliceAll, jute.PermRead, []jute.Id{{Scheme: SchemeSuper, ID: "root"}}, true},
		{"digest exact", aliceAll, jute.PermWrite, []jute.Id{local, alice}, true},
		{"digest other user", aliceAll, jute.PermWrite, []jute.Id{local, bob}, false},
		{"digest no ids", aliceAll, jute.PermWrite, nil, false},
		{"digest id under another scheme", aliceAll, jute.PermRead, []jute.Id{{Scheme: SchemeX509, ID: alice.ID}}, false},
		{"x509 exact", []jute.ACL{entry(jute.PermRead, SchemeX509, "CN=a")}, jute.PermRead, []jute.Id{{Scheme: SchemeX509, ID: "CN=a"}}, true},
		{"x509 differs", []jute.ACL{entry(jute.PermRead, SchemeX509, "CN=a")}, jute.PermRead, []jute.Id{{Scheme: SchemeX509, ID: "CN=b"}}, false},
		{"ip /8", []jute.ACL{entry(jute.PermRead, SchemeIP, "127.0.0.0/8")}, jute.PermRead, []jute.Id{local}, true},
		{"ip other net", []jute.ACL{entry(jute.PermRead, SchemeIP, "10.0.0.0/8")}, jute.PermRead, []jute.Id{local}, false},
		{"stored auth entry matches nothing", []jute.ACL{entry(jute.PermAll, SchemeAuth, "")}, jute.PermRead, []jute.Id{alice, {Scheme: SchemeAuth}}, false},
		{"unknown scheme matches nothing", []jute.ACL{entry(jute.PermAll, "host", "a")}, jute.PermRead, []jute.Id{{Scheme: "host", ID: "a"}}, false},
		// getACL asks for READ|ADMIN: either bit is enough.
		{"read|admin with read only", []jute.ACL{entry(jute.PermRead, SchemeWorld, "anyone")}, jute.PermRead | jute.PermAdmin, nil, true},
		{"read|admin with admin only", []jute.ACL{entry(jute.PermAdmin, SchemeWorld, "anyone")}, jute.PermRead | jute.PermAdmin, nil, true},
		{"read|admin with write only", []jute.ACL{entry(jute.PermWrite, SchemeWorld, "anyone")}, jute.PermRead | jute.PermAdmin, nil, false},
		{"perm 0 fails", openACL, 0, nil, false},
		{"perms 0 entry grants nothing", []jute.ACL{entry(0, SchemeWorld, "anyone")}, jute.PermRead, nil, false},
		{"second entry grants", []jute.ACL{entry(jute.PermRead, SchemeDigest, bob.ID), entry(jute.PermWrite, SchemeDigest, alice.ID)}, jute.PermWrite, []jute.Id{alice}, true},
		{"bit held by another id", []jute.ACL{entry(jute.PermRead, SchemeDigest, alice.ID), entry(jute.PermWrite, SchemeDigest, bob.ID)}, jute.PermWrite, []jute.Id{alice}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(tt.acls, tt.perm, tt.ids); got != tt.want {
				t.Errorf("Check(%v, %d, %v) = %v, want %v", tt.acls, tt.perm, tt.ids, got, tt.want)
			}
		})
	}
}

// Ref: programmer's guide, "Builtin ACL Schemes" (ip: "the most significant
// bits of addr are matched against the most significant bits of the client
// host IP"); Apache IPAuthenticationProvider.matches.
func TestCheckIP(t *testing.T) {
	tests := []struct {
		expr, client string
		want         bool
	}{
		{"0.0.0.0/0", "1.2.3.4", true},
		{"9.9.9.9/0", "1.2.3.4", true},
		{"1.0.0.0/8", "1.2.3.4", true},
		{"1.255.255.255/8", "1.2.3.4", true},
		{"2.0.0.0/8", "1.2.3.4", false},
		{"1.2.3.4/32", "1.2.3.4", true},
		{"1.2.3.5/32", "1.2.3.4", false},
		{"1.2.3.4", "1.2.3.4", true},
		{"1.2.3.5", "1.2.3.4", false},
		{"1.2.3.0/24", "1.2.3.255", true},
		{"1.2.3.0/25", "1.2.3.128", false},
		{"1.2.3.0/25", "1.2.3.127", true},
		{"192.168.0.0/12", "192.175.1.1", true}, // 192.160.0.0/12 covers .160-.175
		{"192.168.0.0/12", "192.176.1.1", false},
		{"127.1.2.3/8", "127.0.0.1", true}, // seen on Apache 3.8
		{"010.0.0.1", "10.0.0.1", true},    // Java parseInt: leading zeros are decimal
		{"+1.-0.0.1/+8", "1.9.9.9", true},  // Java parseInt: signs
		{"1.2.3.4/33", "1.2.3.4", false},   // bits out of range
		{"1.2.3.4/-1", "1.2.3.4", false},
		{"1.2.3.4/", "1.2.3.4", false},
		{"1.2.3.4/8/8", "1.2.3.4", false},
		{"1.2.3", "1.2.3.4", false},
		{"1.2.3.4.", "1.2.3.4", false},
		{"256.0.0.0/0", "1.2.3.4", false},
		{"1.2.3.4", "not-an-ip", false},
		{"1.2.3.4", "", false},
		{"::1", "0:0:0:0:0:0:0:1", true},
		{"::1/128", "::1", true},
		{"::/0", "2001:db8::1", true},
		{"2001:db8::/32", "2001:db8:ffff::1", true},
		{"2001:db8::/32", "2001:db9::1", false},
		{"2001:db8::/33", "2001:db8:8000::1", false},
		{"fe80::/10", "fe80:0:0:0:0:0:0:1%eth0", true},
		{"fe80::1%eth0", "fe80::1", false}, // zones are not ACL syntax
		{"::/0", "1.2.3.4", false},         // families never mix
		{"0.0.0.0/0", "::1", false},
		{"::ffff:1.2.3.4", "1.2.3.4", true}, // clients' mapped addresses are IPv4 ids
		{"::ffff:10.0.0.0/104", "10.9.9.9", true},
		{"::ffff:10.0.0.0/104", "11.9.9.9", false},
		{"::ffff:0:0/95", "1.2.3.4", false},
		{"::1/129", "::1", false},
	}
	for _, tt := range tests {
		acls := []jute.ACL{entry(jute.PermRead, SchemeIP, tt.expr)}
		if got := Check(acls, jute.PermRead, []jute.Id{ipID(tt.client)}); got != tt.want {
			t.Errorf("ip ACL %q, client %q: Check = %v, want %v", tt.expr, tt.client, got, tt.want)
		}
	}
}

func TestIPID(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"::ffff:10.1.2.3", "10.1.2.3"},
		{"::1", "0:0:0:0:0:0:0:1"},
		{"2001:db8::ab:0", "2001:db8:0:0:0:0:ab:0"},
		{"fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0"},
	}
	for _, tt := range tests {
		got := IPID(netip.MustParseAddr(tt.addr))
		if got != ipID(tt.want) {
			t.Errorf("IPID(%s) = %v, want ip:%s", tt.addr, got, tt.want)
		}
		// The id the server hands out must match an ACL naming that host.
		acls := []jute.ACL{entry(jute.PermRead, SchemeIP, netip.MustParseAddr(tt.addr).WithZone("").Unmap().String())}
		if !Check(acls, jute.PermRead, []jute.Id{got}) {
			t.Errorf("IPID(%s) = %v does not match its own address", tt.addr, got)
		}
	}
}

// Fixup cases, checked against Apache 3.8 where noted ("3.8: ..." is what
// a create with that ACL answered there).
func TestFixup(t *testing.T) {
	carol := digestID(Digest("carol:pw"))
	x509 := jute.Id{Scheme: SchemeX509, ID: "CN=client"}
	tests := []struct {
		name string
		acls []jute.ACL
		ids  []jute.Id
		want []jute.ACL // nil: InvalidACL
	}{
		{"open", openACL, nil, openACL},
		{"nil list", nil, []jute.Id{alice}, nil},                           // 3.8: -114
		{"empty list", []jute.ACL{}, []jute.Id{alice}, nil},                // 3.8: -114
		{"world foo", []jute.ACL{entry(31, SchemeWorld, "foo")}, nil, nil}, // 3.8: -114
		{"empty scheme", []jute.ACL{entry(31, "", "")}, nil, nil},          // 3.8: -114
		{"super scheme", []jute.ACL{entry(31, SchemeSuper, "")}, nil, nil}, // 3.8: -114
		{"unknown scheme", []jute.ACL{entry(31, "host", "example.com")}, nil, nil},
		{"auth with only ip id", []jute.ACL{entry(31, SchemeAuth, "")}, []jute.Id{local}, nil}, // 3.8: -114
		{"auth with super only", []jute.ACL{entry(31, SchemeAuth, "")}, []jute.Id{local, superID}, nil},
		{
			"auth expands to digest ids, not ip or super",
			[]jute.ACL{entry(31, SchemeAuth, "")},
			[]jute.Id{local, superID, alice},
			[]jute.ACL{{Perms: 31, ID: alice}},
		},
		{
			// In Apache's set order (JavaSetOrder): x509 before this
			// digest, as OpenJDK iterates them.
			"auth id text is ignored",
			[]jute.ACL{entry(5, SchemeAuth, "whatever")},
			[]jute.Id{alice, x509},
			[]jute.ACL{{Perms: 5, ID: x509}, {Perms: 5, ID: alice}},
		},
		{
			// 3.8: [(3,bob),(3,alice),(31,bob)] - the expansion is not deduplicated.
			"expansion keeps duplicates",
			[]jute.ACL{entry(3, SchemeAuth, ""), {Perms: 31, ID: bob}},
			[]jute.Id{local, bob, alice},
			[]jute.ACL{{Perms: 3, ID: bob}, {Perms: 3, ID: alice}, {Perms: 31, ID: bob}},
		},
		{
			// 3.8: [(31,world,anyone),(31,digest,alice)]
			"input duplicates removed",
			[]jute.ACL{openACL[0], openACL[0], entry(31, SchemeAuth, ""), entry(31, SchemeAuth, "")},
			[]jute.Id{local, alice},
			[]jute.ACL{openACL[0], {Perms: 31, ID: alice}},
		},
		{
			"same id, different perms are not duplicates",
			[]jute.ACL{{Perms: 1, ID: carol}, {Perms: 2, ID: carol}},
			nil,
			[]jute.ACL{{Perms: 1, ID: carol}, {Perms: 2, ID: carol}},
		},
		{"digest ok", []jute.ACL{{Perms: 31, ID: carol}}, nil, []jute.ACL{{Perms: 31, ID: carol}}},
		{"digest trailing colon ok", []jute.ACL{entry(31, SchemeDigest, "a:b:")}, nil, []jute.ACL{entry(31, SchemeDigest, "a:b:")}}, // 3.8: 0
		{"digest empty user ok", []jute.ACL{entry(31, SchemeDigest, ":b")}, nil, []jute.ACL{entry(31, SchemeDigest, ":b")}},
		{"digest no hash", []jute.ACL{entry(31, SchemeDigest, "a:")}, nil, nil},                // 3.8: -114
		{"digest three fields", []jute.ACL{entry(31, SchemeDigest, "dave:abc:def")}, nil, nil}, // 3.8: -114
		{"digest empty middle", []jute.ACL{entry(31, SchemeDigest, "a::b")}, nil, nil},
		{"digest no colon", []jute.ACL{entry(31, SchemeDigest, "abc")}, nil, nil},
		{"digest colon only", []jute.ACL{entry(31, SchemeDigest, ":")}, nil, nil},
		{"ip ok", []jute.ACL{entry(1, SchemeIP, "10.0.0.0/8")}, nil, []jute.ACL{entry(1, SchemeIP, "10.0.0.0/8")}},
		{"ip signs ok", []jute.ACL{entry(1, SchemeIP, "+1.-0.0.1/+8")}, nil, []jute.ACL{entry(1, SchemeIP, "+1.-0.0.1/+8")}}, // 3.8: 0
		{"ip /33", []jute.ACL{entry(1, SchemeIP, "1.2.3.4/33")}, nil, nil},                                                   // 3.8: -114
		{"ip garbage", []jute.ACL{entry(1, SchemeIP, "example.com")}, nil, nil},
		// Apache 3.8 rejects every IPv6 ACL (-114); Zoo accepts them.
		{"ip v6", []jute.ACL{entry(1, SchemeIP, "fe80::/64")}, nil, []jute.ACL{entry(1, SchemeIP, "fe80::/64")}},
		{"x509", []jute.ACL{{Perms: 31, ID: x509}}, nil, []jute.ACL{{Perms: 31, ID: x509}}},
		{"x509 empty", []jute.ACL{entry(31, SchemeX509, "")}, nil, nil},
		{"perms 0 kept", []jute.ACL{entry(0, SchemeWorld, "anyone")}, nil, []jute.ACL{entry(0, SchemeWorld, "anyone")}},       // 3.8: 0
		{"perms 999 kept", []jute.ACL{entry(999, SchemeWorld, "anyone")}, nil, []jute.ACL{entry(999, SchemeWorld, "anyone")}}, // 3.8: 0
		{"one bad entry spoils the list", []jute.ACL{openACL[0], entry(31, SchemeWorld, "x")}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fixup(tt.acls, tt.ids)
			if tt.want == nil {
				if !errors.Is(err, jute.InvalidACL) {
					t.Fatalf("Fixup = %v, %v; want InvalidACL", got, err)
				}
				var code jute.Code
				if !errors.As(err, &code) || code != jute.InvalidACL {
					t.Fatalf("errors.As(%v) does not give InvalidACL", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fixup: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Fixup = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFixupDoesNotAlias(t *testing.T) {
	in := []jute.ACL{entry(31, SchemeAuth, ""), openACL[0]}
	out, err := Fixup(in, []jute.Id{alice})
	if err != nil {
		t.Fatal(err)
	}
	out[0].Perms = 0
	if in[0].Perms != 31 || in[0].ID.Scheme != SchemeAuth {
		t.Fatalf("Fixup modified its input: %v", in)
	}
}

// Observed on Apache 3.8: getACL by a session with READ but not ADMIN shows
// digest ids as "user:x".
func TestRedact(t *testing.T) {
	in := []jute.ACL{openACL[0], {Perms: 1, ID: alice}, entry(1, SchemeIP, "::1"), entry(1, SchemeDigest, "nocolon"), entry(1, SchemeDigest, "a:b\nc:d")}
	want := []jute.ACL{openACL[0], entry(1, SchemeDigest, "alice:x"), entry(1, SchemeIP, "::1"), entry(1, SchemeDigest, "nocolon"), entry(1, SchemeDigest, "a:x\nc:x")}
	got := Redact(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Redact = %v, want %v", got, want)
	}
	if in[1].ID != alice {
		t.Fatalf("Redact modified its input")
	}
	if Redact(nil) != nil {
		t.Fatalf("Redact(nil) != nil")
	}
}

func BenchmarkCheckDigest(b *testing.B) {
	acls := []jute.ACL{{Perms: jute.PermRead, ID: bob}, {Perms: jute.PermAll, ID: alice}}
	ids := []jute.Id{local, alice}
	b.ReportAllocs()
	for b.Loop() {
		if !Check(acls, jute.PermWrite, ids) {
			b.Fatal("denied")
		}
	}
}

func BenchmarkCheckIP(b *testing.B) {
	acls := []jute.ACL{entry(jute.PermAll, SchemeIP, "10.0.0.0/8"), entry(jute.PermAll, SchemeIP, "127.0.0.0/8")}
	ids := []jute.Id{local}
	b.ReportAllocs()
	for b.Loop() {
		if !Check(acls, jute.PermWrite, ids) {
			b.Fatal("denied")
		}
	}
}

// distinctACL is n distinct valid entries, as a hostile create could send:
// about 25 bytes each, so 40,000 fit in the default jute.maxbuffer.
func distinctACL(n int) []jute.ACL {
	acls := make([]jute.ACL, n)
	for i := range acls {
		acls[i] = entry(jute.PermRead, SchemeIP, netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String())
	}
	return acls
}

// Ref: issue 13, defect 6: one create with 40,000 ACL entries stalled every
// other client's writes for seconds, because prep (on the replica's loop)
// deduplicated the list in quadratic time. Fixup must stay linear: it may
// cost a small multiple of one pass that puts every entry in a map, a
// linear reference measured on the same machine in the same run (so a
// slow machine or the race detector slows both). The quadratic dedup
// cost hundreds of times the reference at this size.
func TestFixupIsLinear(t *testing.T) {
	const n = 40000
	acls := distinctACL(n)
	best := func(f func()) time.Duration {
		d := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			f()
			d = min(d, time.Since(start))
		}
		return d
	}
	reference := best(func() {
		m := make(map[jute.ACL]struct{})
		for _, a := range acls {
			m[a] = struct{}{}
		}
	})
	fixup := best(func() {
		if out, err := Fixup(acls, nil); err != nil || len(out) != n {
			t.Fatalf("Fixup(%d entries) = %d entries, %v", n, len(out), err)
		}
	})
	t.Logf("Fixup of %d entries: %v; one pass into a map: %v", n, fixup, reference)
	if fixup > 30*reference {
		t.Errorf("Fixup of %d entries took %v, %.0f times one pass into a map (%v): not linear",
			n, fixup, float64(fixup)/float64(reference), reference)
	}
}

func BenchmarkFixup40000(b *testing.B) {
	acls := distinctACL(40000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fixup(acls, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSASLScheme(t *testing.T) {
	bob := jute.Id{Scheme: SchemeSASL, ID: "bob"}
	node := []jute.ACL{{Perms: jute.PermRead, ID: bob}}
	for _, tc := range []struct {
		ids  []jute.Id
		want bool
	}{
		{[]jute.Id{bob}, true},
		{[]jute.Id{{Scheme: SchemeSASL, ID: "alice"}}, false},
		{[]jute.Id{{Scheme: SchemeDigest, ID: "bob"}}, false},
		{[]jute.Id{{Scheme: SchemeSASL, ID: "super"}}, true}, // SASLAuthenticationProvider.matches
	} {
		if got := Check(node, jute.PermRead, tc.ids); got != tc.want {
			t.Errorf("Check(sasl:bob, %v) = %v, want %v", tc.ids, got, tc.want)
		}
	}
	got, err := Fixup([]jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: SchemeAuth}}}, []jute.Id{{Scheme: SchemeIP, ID: "127.0.0.1"}, bob})
	if err != nil || len(got) != 1 || got[0].ID != bob {
		t.Errorf("Fixup(auth) with a sasl id = %v, %v; want sasl:bob", got, err)
	}
	for name, valid := range map[string]bool{
		"bob": true, "zookeeper/host.example.com@EXAMPLE.COM": true, "bob@EXAMPLE.COM": true,
		"bob/host": false, "a@b@c": false, "a/b/c@R": false, "a@R/x": false,
	} {
		_, err := Fixup([]jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: SchemeSASL, ID: name}}}, nil)
		if (err == nil) != valid {
			t.Errorf("Fixup(sasl:%s) = %v, want valid %v", name, err, valid)
		}
	}
}
