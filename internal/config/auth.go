package config

import (
	"fmt"
	"slices"
	"strings"
)

// Apache's authentication provider classes, as named by authProvider.N.
const (
	SASLProviderClass   = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
	DigestProviderClass = "org.apache.zookeeper.server.auth.DigestAuthenticationProvider"
	IPProviderClass     = "org.apache.zookeeper.server.auth.IPAuthenticationProvider"
)

// DefaultAuditFile is where audit records go when audit.enable is true and
// audit.file is not set: Apache's zookeeper_audit.log, in dataLogDir.
const DefaultAuditFile = "zookeeper_audit.log"

// DefaultAuditMaxFileSize is the size past which the audit log rotates:
// Apache's log4j appender's 10 MB.
const DefaultAuditMaxFileSize = 10 << 20

// Auth holds the SASL, enforced-authentication and audit settings.
type Auth struct {
	// JaasFile is java.security.auth.login.config: the JAAS file whose
	// Server section holds the DIGEST-MD5 users. It comes from the -D
	// flags in SERVER_JVMFLAGS or JVMFLAGS, not from zoo.cfg.
	JaasFile string
	// SASLProvider is set when an authProvider.N key names
	// SASLAuthenticationProvider.
	SASLProvider bool
	// SuperUser is zookeeper.superUser: the sasl id that is super user.
	SuperUser string
	// SuperPassword is SASLAuthenticationProvider.superPassword, the
	// DIGEST-MD5 password of user "super" when set.
	SuperPassword string
	// AllowSASLFailedClients keeps a connection whose SASL exchange failed
	// (allowSaslFailedClients), unless SASL is required.
	AllowSASLFailedClients bool
	// EnforceAuth and EnforceAuthSchemes are enforce.auth.enabled and
	// enforce.auth.schemes; sessionRequireClientSASLAuth=true sets them to
	// true and [sasl], and wins over them, as in Apache.
	EnforceAuth                  bool
	EnforceAuthSchemes           []string
	SessionRequireClientSASLAuth bool
	// KerberosRemoveHost and KerberosRemoveRealm are
	// kerberos.removeHostFromPrincipal and removeRealmFromPrincipal.
	KerberosRemoveHost  bool
	KerberosRemoveRealm bool

	// Audit is audit.enable; AuditFile (audit.file, a Zoo key) is where
	// the records go and AuditMaxFileSize (audit.maxFileSize, bytes) when
	// the file rotates.
	Audit            bool
	AuditFile        string
	AuditMaxFileSize int64
}

// AuthSchemes returns the schemes the server has providers for: ip and
// digest always, sasl with SASLAuthenticationProvider.
func (c *Config) AuthSchemes() []string {
	s := []string{"ip", "digest"}
	if c.Auth.SASLProvider {
		s = append(s, "sasl")
	}
	return s
}

// EnforcedSchemes returns the schemes a session must have authenticated
// with before its requests are served, nil if none is enforced.
// sessionRequireClientSASLAuth wins over enforce.auth.*.
func (c *Config) EnforcedSchemes() []string {
	switch {
	case c.Auth.SessionRequireClientSASLAuth:
		return []string{"sasl"}
	case c.Auth.EnforceAuth:
		return c.Auth.EnforceAuthSchemes
	}
	return nil
}

// auth checks what Apache's AuthenticationHelper checks at start-up:
// enforcement names schemes, each with a provider.
func (v *validator) auth() {
	c := v.c
	schemes := c.EnforcedSchemes()
	key := "enforce.auth.schemes"
	switch {
	case c.Auth.SessionRequireClientSASLAuth:
		key = "sessionRequireClientSASLAuth"
	case !c.Auth.EnforceAuth:
		return
	case len(schemes) == 0:
		v.add("enforce.auth.enabled", fmt.Errorf("%w: enforce.auth.enabled is true, so enforce.auth.schemes must name the schemes", ErrInvalid))
		return
	}
	for _, s := range schemes {
		if !slices.Contains(c.AuthSchemes(), s) {
			v.add(key, fmt.Errorf("%w: authentication scheme %s is not available (authProvider.1=%s enables sasl)", ErrInvalid, s, SASLProviderClass))
		}
	}
}

// authProviderKey reads authProvider.N. Zoo's providers are built in:
// the key may name the SASL, digest or IP provider. Another class (a
// custom provider, or x509 before TLS is configured) is not this
// handler's: it returns false and the key is reported as unsupported.
func authProviderKey(c *Config, value string) bool {
	switch value {
	case SASLProviderClass:
		c.Auth.SASLProvider = true
	case DigestProviderClass, IPProviderClass:
	default:
		return false
	}
	return true
}

func authBoolKey(field func(*Auth) *bool) handler {
	return boolKey(func(c *Config) *bool { return field(&c.Auth) })
}

func authStrKey(field func(*Auth) *string) handler {
	return strKey(func(c *Config) *string { return field(&c.Auth) }, true)
}

// enforceSchemesKey splits enforce.auth.schemes on commas, trimmed,
// empty entries dropped, as AuthenticationHelper does.
func enforceSchemesKey(c *Config, value string, _ Pos) error {
	c.Auth.EnforceAuthSchemes = nil
	for _, s := range strings.Split(value, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(c.Auth.EnforceAuthSchemes, s) {
			c.Auth.EnforceAuthSchemes = append(c.Auth.EnforceAuthSchemes, s)
		}
	}
	return nil
}

func auditSizeKey(c *Config, value string, pos Pos) error {
	return int64Key(func(c *Config) *int64 { return &c.Auth.AuditMaxFileSize }, 1024)(c, value, pos)
}
