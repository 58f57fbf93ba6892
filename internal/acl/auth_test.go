package acl

import (
	"errors"
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// The expected values were printed by Apache 3.8's own generator:
//
//	java -cp '/usr/share/java/*' \
//	  org.apache.zookeeper.server.auth.DigestAuthenticationProvider user:password ...
//
// (alice:pw was read back with getACL from an Apache 3.8 server.)
func TestDigestMatchesApache(t *testing.T) {
	tests := []struct{ in, want string }{
		{"user:password", "user:tpUq/4Pn5A64fVZyQ0gOJ8ZWqkY="},
		{"super:secret", "super:lK75jTNcA+U9vtVEw5vB51mj/w4="},
		{"alice:pw", "alice:V55/p2T0OpjQ+low3NVAH4aLvm0="},
		{"bob:pa:ss", "bob:ZLnpyJBWh1VZxyRoQkI2cRg/9PM="}, // split on the first colon
		{"nocolon", "nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g="},
		{"ü:é", "ü:bWpS2Ha8OYJqPRUYT4h1iRa2nIY="}, // hashed as UTF-8
		{":", ":BaefBs8/Z/cm2uaNGKIpD2yaUMk="},
		{"a:", "a:faqErSBWcv9/lZW1ERCcDsnNQLg="},
	}
	for _, tt := range tests {
		if got := Digest(tt.in); got != tt.want {
			t.Errorf("Digest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	const superDigest = "super:lK75jTNcA+U9vtVEw5vB51mj/w4=" // super:secret
	tests := []struct {
		name, scheme string
		auth         string
		super        string
		want         []jute.Id
		fail         bool
	}{
		{"digest", "digest", "alice:pw", superDigest, []jute.Id{alice}, false},
		{"digest super", "digest", "super:secret", superDigest, []jute.Id{superID, digestID(superDigest)}, false},
		{"digest super wrong password", "digest", "super:guess", superDigest, []jute.Id{digestID(Digest("super:guess"))}, false},
		{"super disabled", "digest", "super:secret", "", []jute.Id{digestID(superDigest)}, false},
		{"digest without colon is accepted", "digest", "nocolon", "", []jute.Id{digestID("nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g=")}, false},
		{"digest empty", "digest", "", "", []jute.Id{digestID(Digest(""))}, false},
		{"ip adds nothing", "ip", "whatever", "", nil, false},
		{"world", "world", "anyone", "", nil, true},
		{"auth", "auth", "", "", nil, true},
		{"super scheme", "super", "secret", superDigest, nil, true},
		{"x509 by packet", "x509", "CN=a", "", nil, true},
		{"sasl", "sasl", "x", "", nil, true},
		{"unknown", "foo", "x", "", nil, true}, // 3.8: -115, then closes the connection
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Authenticate(tt.scheme, []byte(tt.auth), tt.super)
			if tt.fail {
				if !errors.Is(err, jute.AuthFailed) {
					t.Fatalf("Authenticate = %v, %v; want AuthFailed", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Authenticate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAuthenticateInvalidUTF8(t *testing.T) {
	got, err := Authenticate("digest", []byte("u:p\xff"), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := Digest("u:p\uFFFD"); got[0].ID != want {
		t.Fatalf("got %q, want %q", got[0].ID, want)
	}
}

// An authenticated session can use the ACL it asked for with auth.
func TestAuthenticateFixupCheck(t *testing.T) {
	ids, err := Authenticate("digest", []byte("carol:pw"), "")
	if err != nil {
		t.Fatal(err)
	}
	ids = append([]jute.Id{local}, ids...)
	acls, err := Fixup([]jute.ACL{entry(jute.PermAll, SchemeAuth, "")}, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !Check(acls, jute.PermWrite, ids) {
		t.Fatalf("creator denied on %v", acls)
	}
	if Check(acls, jute.PermWrite, []jute.Id{local}) {
		t.Fatalf("anonymous session allowed on %v", acls)
	}
}
