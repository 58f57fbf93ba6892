package config

import (
	"fmt"
	"strings"
)

// Never weaker than asked (DESIGN decision 14): a security setting Zoo does
// not provide stops the server at start-up instead of being ignored. Every
// security setting of Apache ZooKeeper 3.9 is in the table below, with how
// Zoo treats it. When a feature lands, flip its lines from Refused to
// Honoured (or add the values it honours to accept); a Honoured key's value
// is kept in Config.Security for the package that implements it.

// Support says whether Zoo provides what a security setting asks for.
type Support int

const (
	// Refused: setting the key (to anything but one of its accept values)
	// stops the server at start-up.
	Refused Support = iota
	// Honoured: Zoo implements the key; its value is in Config.Security.
	Honoured
)

// source says where Apache reads a security setting from.
type source int

const (
	// both: a zoo.cfg key K that QuorumPeerConfig does not parse becomes
	// the system property zookeeper.K; so -Dzookeeper.K works too, and
	// zoo.cfg wins because it is applied after the JVM starts.
	both source = iota
	// cfgOnly: a key QuorumPeerConfig parses itself; no system property
	// is read for it.
	cfgOnly
	// propOnly: a JVM system property read under its own name, never
	// from zoo.cfg (which would only set zookeeper.<name>).
	propOnly
)

// securityKey is one security setting. name is its zoo.cfg name (for
// propOnly, the property's name); a trailing "*" matches any suffix.
// accept lists values (compared case-insensitively) that are honoured even
// when the key as a whole is Refused: values that ask for no security, or
// for what Zoo already provides.
type securityKey struct {
	name    string
	from    source
	support Support
	accept  []string
}

const (
	digestProvider = "org.apache.zookeeper.server.auth.DigestAuthenticationProvider"
	x509Provider   = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"
	nettyFactory   = "org.apache.zookeeper.server.NettyServerCnxnFactory"
	nioFactory     = "org.apache.zookeeper.server.NIOServerCnxnFactory"
)

// X509Provider is Apache's X509AuthenticationProvider class name, the one
// authProvider.N value that turns on x509 ids.
const X509Provider = x509Provider

// securityKeys is every security setting of Apache ZooKeeper 3.9, one line
// each (keep it that way: engineers flip lines as features land).
var securityKeys = []securityKey{
	// Client TLS (ClientX509Util, prefix zookeeper.ssl.).
	{"secureClientPort", cfgOnly, Honoured, nil},
	{"secureClientPortAddress", cfgOnly, Honoured, nil},
	{"client.portUnification", both, Honoured, []string{"false"}},
	{"client.certReload", both, Honoured, []string{"false"}},
	{"serverCnxnFactory", both, Refused, []string{nettyFactory, nioFactory}}, // TLS needs Netty in Apache; Zoo has one
	{"ssl.protocol", both, Honoured, nil},
	{"ssl.enabledProtocols", both, Honoured, nil},
	{"ssl.ciphersuites", both, Honoured, nil},
	{"ssl.keyStore.location", both, Honoured, nil},
	{"ssl.keyStore.password", both, Honoured, nil},
	{"ssl.keyStore.passwordPath", both, Honoured, nil},
	{"ssl.keyStore.type", both, Honoured, nil},
	{"ssl.trustStore.location", both, Honoured, nil},
	{"ssl.trustStore.password", both, Honoured, nil},
	{"ssl.trustStore.passwordPath", both, Honoured, nil},
	{"ssl.trustStore.type", both, Honoured, nil},
	{"ssl.context.supplier.class", both, Refused, nil},
	{"ssl.hostnameVerification", both, Honoured, nil},
	{"ssl.clientHostnameVerification", both, Refused, nil},
	{"ssl.allowReverseDnsLookup", both, Refused, []string{"false"}},
	{"ssl.crl", both, Honoured, []string{"false"}},
	{"ssl.ocsp", both, Honoured, []string{"false"}},
	{"ssl.clientAuth", both, Honoured, nil},
	{"ssl.handshakeDetectionTimeoutMillis", both, Honoured, nil},
	{"ssl.authProvider", both, Refused, []string{"x509"}},
	{"ssl.*", both, Refused, nil},
	{"fips-mode", both, Refused, nil},
	// The JVM's revocation switches, which X509Util sets itself for
	// ssl.crl and ssl.ocsp; Zoo reads them for the client port and the
	// quorum alike (CRL distribution points are always fetched when
	// checking is on, so enableCRLDP has nothing more to turn on).
	{"com.sun.net.ssl.checkRevocation", propOnly, Honoured, []string{"false"}},
	{"com.sun.security.enableCRLDP", propOnly, Honoured, []string{"false"}},
	{"ocsp.enable", propOnly, Honoured, []string{"false"}},
	// Quorum TLS (QuorumX509Util, prefix zookeeper.ssl.quorum.).
	{"sslQuorum", cfgOnly, Honoured, nil},
	{"portUnification", cfgOnly, Honoured, nil},
	{"sslQuorumReloadCertFiles", cfgOnly, Honoured, nil},
	{"ssl.quorum.keyStore.location", both, Honoured, nil},
	{"ssl.quorum.keyStore.password", both, Honoured, nil},
	{"ssl.quorum.keyStore.passwordPath", both, Honoured, nil},
	{"ssl.quorum.keyStore.type", both, Honoured, nil},
	{"ssl.quorum.trustStore.location", both, Honoured, nil},
	{"ssl.quorum.trustStore.password", both, Honoured, nil},
	{"ssl.quorum.trustStore.passwordPath", both, Honoured, nil},
	{"ssl.quorum.trustStore.type", both, Honoured, nil},
	{"ssl.quorum.protocol", both, Honoured, nil},
	{"ssl.quorum.enabledProtocols", both, Honoured, nil},
	{"ssl.quorum.ciphersuites", both, Honoured, nil},
	{"ssl.quorum.hostnameVerification", both, Honoured, nil},
	{"ssl.quorum.clientHostnameVerification", both, Honoured, nil},
	{"ssl.quorum.clientAuth", both, Honoured, nil},
	{"ssl.quorum.handshakeDetectionTimeoutMillis", both, Honoured, nil},
	{"ssl.quorum.crl", both, Honoured, []string{"false"}},
	{"ssl.quorum.ocsp", both, Honoured, []string{"false"}},
	{"ssl.quorum.*", both, Refused, nil},
	// Authentication providers and super users.
	{"authProvider.*", both, Refused, []string{digestProvider, x509Provider, SASLProviderClass, IPProviderClass}},
	{"X509AuthenticationProvider.superUser", both, Honoured, nil},
	{"superUser", both, Honoured, nil},
	{"SASLAuthenticationProvider.superPassword", both, Honoured, nil},
	{"DigestAuthenticationProvider.enabled", both, Refused, []string{"true"}},
	{"DigestAuthenticationProvider.digestAlg", both, Refused, []string{"SHA1"}},
	{"ensembleAuthName", both, Refused, nil},
	// SASL, Kerberos and enforced authentication.
	{"java.security.auth.login.config", propOnly, Honoured, nil},
	{"java.security.krb5.conf", propOnly, Refused, nil},
	{"sasl.*", both, Refused, nil},
	{"authMeth", both, Refused, nil},
	{"kerberos.removeHostFromPrincipal", both, Honoured, nil},
	{"kerberos.removeRealmFromPrincipal", both, Honoured, nil},
	{"security.auth_to_local", both, Refused, nil},
	{"enforce.auth.enabled", both, Honoured, nil},
	{"enforce.auth.schemes", both, Honoured, nil},
	{"sessionRequireClientSASLAuth", both, Honoured, nil},
	{"requireClientAuthScheme", both, Refused, nil},
	{"allowSaslFailedClients", both, Honoured, nil},
	// Quorum SASL (QuorumPeerConfig parses these itself).
	{"quorum.auth.enableSasl", cfgOnly, Honoured, nil},
	{"quorum.auth.learnerRequireSasl", cfgOnly, Honoured, nil},
	{"quorum.auth.serverRequireSasl", cfgOnly, Honoured, nil},
	{"quorum.auth.learner.saslLoginContext", cfgOnly, Honoured, nil},
	{"quorum.auth.server.saslLoginContext", cfgOnly, Honoured, nil},
	{"quorum.auth.kerberos.servicePrincipal", cfgOnly, Refused, nil}, // GSSAPI between servers is not provided
	{"quorum.auth.*", cfgOnly, Refused, nil},
	// AdminServer and audit.
	{"admin.forceHttps", both, Honoured, nil},
	{"admin.needClientAuth", both, Honoured, nil},
	{"admin.portUnification", both, Honoured, nil},
	{"audit.enable", both, Honoured, nil},
	{"audit.file", both, Honoured, nil},        // Zoo's own: where the records go
	{"audit.maxFileSize", both, Honoured, nil}, // Zoo's own: when the file rotates
	{"audit.*", both, Refused, nil},
}

// lookupSecurity returns the entry for a zoo.cfg key (fromCfg) or for a
// system property name without its "zookeeper." prefix: an exact name
// first, else the longest matching "*" family.
func lookupSecurity(name string, want func(source) bool) (securityKey, bool) {
	var best securityKey
	found := false
	for _, k := range securityKeys {
		if !want(k.from) {
			continue
		}
		if k.name == name {
			return k, true
		}
		if p, ok := strings.CutSuffix(k.name, "*"); ok && strings.HasPrefix(name, p) && len(k.name) > len(best.name) {
			best, found = k, true
		}
	}
	return best, found
}

// fromCfg accepts every entry: a propOnly name in zoo.cfg only sets a
// property Apache never reads, but it still asks for security, so Zoo
// refuses it rather than ignore it.
func fromCfg(source) bool    { return true }
func fromProp(s source) bool { return s != cfgOnly }

// refusal returns the error for a value of k that Zoo does not honour, or
// nil.
func (k securityKey) refusal(value string) error {
	for _, a := range k.accept {
		if strings.EqualFold(value, a) {
			return nil
		}
	}
	if k.support == Honoured {
		return nil
	}
	if len(k.accept) > 0 {
		return fmt.Errorf("%w: Zoo does not provide %q here (it accepts only %s); refusing to start weaker than asked",
			ErrRefused, value, strings.Join(k.accept, ", "))
	}
	return fmt.Errorf("%w: Zoo does not provide this security setting yet; refusing to start weaker than asked", ErrRefused)
}

// setSecurity applies a zoo.cfg key if it is a security setting. ok is
// false when it is not one.
func (c *Config) setSecurity(key, value string, pos Pos) (ok bool, err error) {
	k, ok := lookupSecurity(key, fromCfg)
	if !ok {
		return false, nil
	}
	if err := k.refusal(value); err != nil {
		return true, err
	}
	if c.Security == nil {
		c.Security = map[string]string{}
	}
	c.Security[key] = value
	return true, c.applySecurity(key, value, pos)
}

// applySecurity hands an honoured security setting that has a field of its
// own (the SASL, enforced-auth and audit settings of Config.Auth) to the
// code that sets it, whether it came from zoo.cfg or from a -D flag.
func (c *Config) applySecurity(name, value string, pos Pos) error {
	switch {
	case name == "java.security.auth.login.config":
		c.Auth.JaasFile = value
	case strings.HasPrefix(name, "authProvider."):
		authProviderKey(c, value)
	default:
		if h, ok := handlers[name]; ok {
			return h(c, value, pos)
		}
	}
	return nil
}
