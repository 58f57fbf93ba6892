package admin

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
)

// FuzzAuthorization: any Authorization header gets one of the three
// outcomes, never a panic.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"", "digest alice:secret", "digest", "ip", "x509", "digest a b", "digest  ", " ", "sasl x", "digest super:test"} {
		f.Add(s)
	}
	a := &Auth{SuperDigest: acl.Digest("super:test"), X509: true,
		RootACL: rootACL(jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: acl.SchemeDigest, ID: acl.Digest("alice:secret")}})}
	f.Fuzz(func(t *testing.T, info string) {
		r := httptest.NewRequest("GET", "/commands/snapshot", nil)
		err := a.authorize(r, info)
		if err != nil && !errors.Is(err, errNotAuthn) && !errors.Is(err, errNotAuthz) {
			t.Fatalf("%q: %v", info, err)
		}
	})
}
