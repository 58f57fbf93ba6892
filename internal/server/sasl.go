package server

import (
	"crypto/rand"
	"slices"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/digestmd5"
	"github.com/zoohq/zoo/internal/jute"
)

// SASLConfig is the server's SASL login: the DIGEST-MD5 users of the JAAS
// Server section and what Apache's zookeeper.* SASL properties say.
type SASLConfig struct {
	// Users maps DIGEST-MD5 user names to passwords (user_NAME="pw").
	Users map[string]string
	// SuperUser is zookeeper.superUser: the authenticated name that also
	// gets the super id.
	SuperUser string
	// SuperPassword, when set, is user super's password
	// (zookeeper.SASLAuthenticationProvider.superPassword), over any
	// user_super in the JAAS section.
	SuperPassword string
	// AllowFailed keeps the connection of a client whose exchange failed
	// (zookeeper.allowSaslFailedClients), unless SASL is enforced.
	AllowFailed bool
	// RemoveHost and RemoveRealm shorten authenticated principals
	// (kerberos.removeHostFromPrincipal, removeRealmFromPrincipal).
	RemoveHost, RemoveRealm bool
	// Keytab, when set, makes the mechanism GSSAPI (Kerberos) instead of
	// DIGEST-MD5, as a JAAS Server section with Krb5LoginModule does in
	// Apache: tickets for Principal ("zookeeper/host", without realm)
	// are accepted with the keys of Keytab.
	Keytab    *keytab.Keytab
	Principal string
}

// saslMechanism is one SASL exchange, server side.
type saslMechanism interface {
	Step(token []byte) ([]byte, error)
	Complete() bool
	User() string
}

func (sc *SASLConfig) mechanism(now func() time.Time) (saslMechanism, string) {
	if sc.Keytab != nil {
		return auth.NewGSSAPIServer(sc.Keytab, sc.Principal, now), "GSSAPI"
	}
	return digestmd5.NewServer(digestmd5.Service, digestmd5.Host, sc.password, rand.Reader), "DIGEST-MD5"
}

// password is SaslServerCallbackHandler's lookup.
func (sc *SASLConfig) password(user string) (string, bool) {
	if user == "super" && sc.SuperPassword != "" {
		return sc.SuperPassword, true
	}
	pw, ok := sc.Users[user]
	return pw, ok
}

// saslStep answers a sasl request as Apache's ZooKeeperServer.processSasl
// does. Without a SASL login it answers OK with a null token, and a
// client with a JAAS section carries on. A failed exchange is answered
// with AuthFailed (SessionClosedRequireSaslAuth when SASL is enforced)
// and the connection closed, unless allowSaslFailedClients keeps it.
func (c *conn) saslStep(r *request, req *jute.SASLRequest) error {
	sc := c.srv.cfg.SASL
	if sc == nil {
		r.complete(0, jute.OK, &jute.SASLResponse{})
		return nil
	}
	if c.sasl == nil {
		c.sasl, c.saslMech = sc.mechanism(c.srv.cfg.Now)
	}
	token, err := c.sasl.Step(req.Token)
	if err != nil {
		return c.saslFailed(r, err)
	}
	if c.sasl.Complete() {
		name := auth.ShortName(c.sasl.User(), sc.RemoveHost, sc.RemoveRealm)
		ids := []jute.Id{{Scheme: acl.SchemeSASL, ID: name}}
		if sc.SuperUser != "" && name == sc.SuperUser {
			ids = append([]jute.Id{{Scheme: acl.SchemeSuper, ID: ""}}, ids...)
		}
		c.addAuth(ids)
		c.srv.log.Info("SASL authenticated", "session", sessionHex(c.sessionID()), "remote", c.nc.RemoteAddr(),
			"mechanism", c.saslMech, "id", name, "super", len(ids) == 2)
	}
	r.complete(0, jute.OK, &jute.SASLResponse{Token: token})
	return nil
}

func (c *conn) saslFailed(r *request, err error) error {
	required := slices.Contains(c.srv.cfg.EnforceAuthSchemes, acl.SchemeSASL)
	if c.srv.cfg.SASL.AllowFailed && !required {
		c.srv.log.Warn("SASL authentication failed; keeping the connection (allowSaslFailedClients)",
			"session", sessionHex(c.sessionID()), "remote", c.nc.RemoteAddr(), "err", err)
		r.complete(0, jute.OK, &jute.SASLResponse{})
		return nil
	}
	code := jute.AuthFailed
	if required {
		code = jute.SessionClosedRequireSaslAuth
	}
	c.srv.log.Warn("SASL authentication failed; closing the connection", "session", sessionHex(c.sessionID()),
		"remote", c.nc.RemoteAddr(), "code", code, "err", err)
	r.completeFrame(encodeFrame(&jute.ReplyHeader{Xid: r.xid, Err: code}, &jute.SASLResponse{}), 0, true)
	return errFinishing
}

// enforceAuth is Apache's AuthenticationHelper.enforceAuthentication:
// with enforce.auth.enabled (or sessionRequireClientSASLAuth), a request
// of a connection that holds no id of an enforced scheme is answered
// SessionClosedRequireSaslAuth and the connection is closed. It reports
// whether the request may go on.
func (c *conn) enforceAuth(r *request) bool {
	schemes := c.srv.cfg.EnforceAuthSchemes
	if len(schemes) == 0 {
		return true
	}
	ids := c.authIDs()
	for _, id := range ids {
		if slices.Contains(schemes, id.Scheme) {
			return true
		}
	}
	have := make([]string, 0, len(ids))
	for _, id := range ids {
		have = append(have, id.Scheme)
	}
	c.srv.log.Error("client has not authenticated with a required scheme; closing its connection",
		"session", sessionHex(c.sessionID()), "remote", c.nc.RemoteAddr(), "op", r.op,
		"schemes", have, "required", schemes)
	r.completeFrame(encodeFrame(&jute.ReplyHeader{Xid: r.xid, Err: jute.SessionClosedRequireSaslAuth}, nil), 0, true)
	return false
}
