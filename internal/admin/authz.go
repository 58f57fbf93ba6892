package admin

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/jute"
)

// Auth is how the protected commands (snapshot, restore) authenticate a
// user, as Apache 3.9's Commands.handleAuthentication: the Authorization
// header is "<scheme> <auth>" (or just "<scheme>" for ip and x509, whose
// identity comes from the request), the scheme's provider turns it into
// ids, and those ids need ALL on the root node's ACL.
type Auth struct {
	// SuperDigest is DigestAuthenticationProvider.superDigest
	// ("super:<hash>"); "" has no super user.
	SuperDigest string
	// X509 is whether the x509 provider is registered (authProvider.x509
	// or secureClientPort); X509SuperUser is its superUser.
	X509          bool
	X509SuperUser string
	// RootACL returns the root node's ACL.
	RootACL func() ([]jute.ACL, error)
}

// Messages and outcomes of Apache's runCommand for protected commands.
const msgNotAuthn = "Not authenticated"

var (
	errAuthMissing = errors.New("admin: no Authorization header")
	errNotAuthn    = errors.New("admin: not authenticated")
	errNotAuthz    = errors.New("admin: not authorized")
)

// authorize checks a request for a protected command. It returns nil,
// errNotAuthn (401) or errNotAuthz (403).
func (a *Auth) authorize(r *http.Request, info string) error {
	ids, err := a.authenticate(r, info)
	if err != nil {
		return err
	}
	acls, err := a.RootACL()
	if err != nil {
		return errNotAuthz
	}
	// Apache checks each bit of ALL on its own: one entry granting them
	// all is not needed, but every bit must be granted by some entry.
	for bit := int32(1); bit <= jute.PermAll; bit <<= 1 {
		if jute.PermAll&bit != 0 && !acl.Check(acls, bit, ids) {
			return errNotAuthz
		}
	}
	return nil
}

// authenticate turns the Authorization header into ids. As Apache, the
// header splits on spaces into one or two fields; a scheme without a
// registered provider, or one that gives no ids, fails.
func (a *Auth) authenticate(r *http.Request, info string) ([]jute.Id, error) {
	fields := strings.Split(info, " ")
	for len(fields) > 1 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1] // Java's split drops trailing empties
	}
	if len(fields) != 1 && len(fields) != 2 {
		return nil, errNotAuthn
	}
	var ids []jute.Id
	switch fields[0] {
	case acl.SchemeDigest:
		if len(fields) != 2 {
			return nil, errNotAuthn // Apache's provider fails on no data
		}
		ids, _ = acl.Authenticate(acl.SchemeDigest, []byte(fields[1]), a.SuperDigest)
	case acl.SchemeIP:
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return nil, errNotAuthn
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return nil, errNotAuthn
		}
		ids = []jute.Id{acl.IPID(ip.Unmap())}
	case acl.SchemeX509:
		if !a.X509 {
			return nil, errNotAuthn
		}
		ids = x509IDs(tlsState(r), a.X509SuperUser)
	}
	if len(ids) == 0 {
		return nil, errNotAuthn
	}
	return ids, nil
}

// x509IDs are the ids of a verified client certificate, as Apache's
// X509AuthenticationProvider gives them; none without one.
func x509IDs(cs *tls.ConnectionState, superUser string) []jute.Id {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil
	}
	name, err := auth.X509ID(cs.PeerCertificates[0])
	if err != nil {
		return nil
	}
	ids := []jute.Id{{Scheme: acl.SchemeX509, ID: name}}
	if superUser != "" && name == superUser {
		ids = append([]jute.Id{{Scheme: acl.SchemeSuper, ID: name}}, ids...)
	}
	return ids
}
