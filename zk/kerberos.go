package zk

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Kerberos says how a client logs in with SASL GSSAPI, as the Java
// client's JAAS Client section with Krb5LoginModule (useKeyTab, keyTab,
// principal) and java.security.krb5.conf do.
type Kerberos struct {
	Krb5Conf  string // path of krb5.conf (realms and KDCs)
	Keytab    string // path of the client's keytab
	Principal string // the client principal, "name" or "name@REALM"
	// Service is the server principal's first part; "" is "zookeeper"
	// (the Java client's zookeeper.sasl.client.username). The ticket is
	// for Service/host, host being the server's name as dialed, or the
	// name an IP address resolves to (the Java client's
	// zookeeper.sasl.client.canonicalize.hostname).
	Service string
}

// WithKerberos authenticates every connection with SASL GSSAPI (RFC 4752)
// over Kerberos: the session then holds the id sasl:principal (as the
// server names it). Failures end the Client with ErrAuthFailed, as with
// WithSASL. The server proves itself by signing its security-layer offer
// with the ticket's session key, which the client checks.
func WithKerberos(k Kerberos) Option {
	return func(c *config) {
		c.sasl = func(host string) (saslMechanism, string, error) {
			m, err := newGSSAPIMech(k, host)
			return m, k.Principal, err
		}
	}
}

type gssapiMech struct {
	cl   *client.Client
	spn  string
	who  string // name@REALM, sent as the authorization id as the Java client does
	key  types.EncryptionKey
	step int
}

func newGSSAPIMech(k Kerberos, host string) (*gssapiMech, error) {
	cfg, err := krbconfig.Load(k.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("krb5.conf: %w", err)
	}
	kt, err := keytab.Load(k.Keytab)
	if err != nil {
		return nil, fmt.Errorf("keytab: %w", err)
	}
	name, realm, ok := strings.Cut(k.Principal, "@")
	if !ok {
		realm = cfg.LibDefaults.DefaultRealm
	}
	service := k.Service
	if service == "" {
		service = "zookeeper"
	}
	cl := client.NewWithKeytab(name, realm, kt, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		cl.Destroy()
		return nil, fmt.Errorf("kerberos login as %s: %w", k.Principal, err)
	}
	return &gssapiMech{cl: cl, spn: service + "/" + canonicalHost(host), who: name + "@" + realm}, nil
}

// canonicalHost is the name of host as the Java client resolves it: an
// IP address becomes the first name it resolves to.
func canonicalHost(host string) string {
	if net.ParseIP(host) == nil {
		return host
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if names, err := net.DefaultResolver.LookupAddr(ctx, host); err == nil && len(names) > 0 {
		return strings.TrimSuffix(names[0], ".")
	}
	return host
}

// Close ends the Kerberos client's session (and its renewal goroutine).
func (m *gssapiMech) Close() { m.cl.Destroy() }

func (m *gssapiMech) Step(challenge []byte) ([]byte, bool, error) {
	switch m.step {
	case 0:
		m.step = 1
		tkt, key, err := m.cl.GetServiceTicket(m.spn)
		if err != nil {
			return nil, false, fmt.Errorf("ticket for %s: %w", m.spn, err)
		}
		m.key = key
		tok, err := spnego.NewKRB5TokenAPREQ(m.cl, tkt, key, []int{gssapi.ContextFlagInteg}, nil)
		if err != nil {
			return nil, false, err
		}
		b, err := tok.Marshal()
		return b, false, err
	case 1:
		m.step = 2
		// The server's offer (RFC 4752 section 3.1), signed with the
		// session key: only the real service could have made it.
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(challenge, true); err != nil {
			return nil, false, fmt.Errorf("server's security layer offer: %w", err)
		}
		if ok, err := wt.Verify(m.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
			return nil, false, fmt.Errorf("server's security layer offer does not verify: %v", err)
		}
		if len(wt.Payload) < 4 || wt.Payload[0]&1 == 0 {
			return nil, false, fmt.Errorf("server offers no plain (no security layer) authentication")
		}
		// No security layer, and the principal as authorization id, as
		// the Java client sends.
		answer, err := gssapi.NewInitiatorWrapToken(append([]byte{1, 0, 0, 0}, m.who...), m.key)
		if err != nil {
			return nil, false, err
		}
		b, err := answer.Marshal()
		return b, true, err
	}
	return nil, true, fmt.Errorf("GSSAPI exchange already complete")
}
