package config

import (
	"errors"
	"strings"
	"testing"
)

// apacheSecurityKeys is every security setting of Apache ZooKeeper 3.9,
// listed here independently of securityKeys, with a value that asks for
// security. Ref: ZooKeeper 3.9 administrator's guide, "Authentication &
// Authorization Options", "Cluster Options" (sslQuorum, portUnification),
// "Encryption, Authentication, Authorization Options"; X509Util,
// QuorumPeerConfig, ZKConfig, QuorumAuth, ServerCnxnFactory,
// AuthenticationHelper and AuditHelper.
var apacheSecurityKeys = []struct {
	key, value string
	prop       bool // Apache also reads it as -Dzookeeper.<key>
}{
	{"secureClientPort", "2281", false},
	{"secureClientPortAddress", "127.0.0.1", false},
	{"client.portUnification", "true", true},
	{"client.certReload", "true", true},
	{"serverCnxnFactory", "com.example.MyFactory", true},
	{"ssl.protocol", "TLSv1.3", true},
	{"ssl.enabledProtocols", "TLSv1.3", true},
	{"ssl.ciphersuites", "TLS_AES_128_GCM_SHA256", true},
	{"ssl.keyStore.location", "/k.jks", true},
	{"ssl.keyStore.password", "pw", true},
	{"ssl.keyStore.passwordPath", "/pw", true},
	{"ssl.keyStore.type", "JKS", true},
	{"ssl.trustStore.location", "/t.jks", true},
	{"ssl.trustStore.password", "pw", true},
	{"ssl.trustStore.passwordPath", "/pw", true},
	{"ssl.trustStore.type", "JKS", true},
	{"ssl.context.supplier.class", "com.example.Supplier", true},
	{"ssl.hostnameVerification", "true", true},
	{"ssl.clientHostnameVerification", "true", true},
	{"ssl.allowReverseDnsLookup", "true", true},
	{"ssl.crl", "true", true},
	{"ssl.ocsp", "true", true},
	{"ssl.clientAuth", "need", true},
	{"ssl.handshakeDetectionTimeoutMillis", "5000", true},
	{"ssl.authProvider", "x509", true},
	{"fips-mode", "false", true},
	{"sslQuorum", "true", false},
	{"portUnification", "true", false},
	{"sslQuorumReloadCertFiles", "true", false},
	{"ssl.quorum.protocol", "TLSv1.3", true},
	{"ssl.quorum.enabledProtocols", "TLSv1.3", true},
	{"ssl.quorum.ciphersuites", "TLS_AES_128_GCM_SHA256", true},
	{"ssl.quorum.keyStore.location", "/k.jks", true},
	{"ssl.quorum.keyStore.password", "pw", true},
	{"ssl.quorum.keyStore.passwordPath", "/pw", true},
	{"ssl.quorum.keyStore.type", "JKS", true},
	{"ssl.quorum.trustStore.location", "/t.jks", true},
	{"ssl.quorum.trustStore.password", "pw", true},
	{"ssl.quorum.trustStore.passwordPath", "/pw", true},
	{"ssl.quorum.trustStore.type", "JKS", true},
	{"ssl.quorum.context.supplier.class", "com.example.Supplier", true},
	{"ssl.quorum.hostnameVerification", "true", true},
	{"ssl.quorum.clientHostnameVerification", "true", true},
	{"ssl.quorum.crl", "true", true},
	{"ssl.quorum.ocsp", "true", true},
	{"ssl.quorum.clientAuth", "need", true},
	{"ssl.quorum.handshakeDetectionTimeoutMillis", "5000", true},
	{"authProvider.1", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider", true},
	{"authProvider.x509", "org.apache.zookeeper.server.auth.X509AuthenticationProvider", true},
	{"authProvider.sasl", "com.example.Custom", true},
	{"X509AuthenticationProvider.superUser", "CN=admin", true},
	{"superUser", "admin", true},
	{"DigestAuthenticationProvider.enabled", "false", true},
	{"DigestAuthenticationProvider.digestAlg", "SHA-256", true},
	{"ensembleAuthName", "prod", true},
	{"sasl.client", "true", true},
	{"sasl.serverconfig", "Server", true},
	{"sasl.client.username", "zookeeper", true},
	{"authMeth", "sasl", true},
	{"kerberos.removeHostFromPrincipal", "true", true},
	{"kerberos.removeRealmFromPrincipal", "true", true},
	{"security.auth_to_local", "RULE:[1:$1]", true},
	{"enforce.auth.enabled", "true", true},
	{"enforce.auth.schemes", "sasl", true},
	{"sessionRequireClientSASLAuth", "true", true},
	{"requireClientAuthScheme", "sasl", true},
	{"allowSaslFailedClients", "true", true},
	{"quorum.auth.enableSasl", "true", false},
	{"quorum.auth.learnerRequireSasl", "true", false},
	{"quorum.auth.serverRequireSasl", "true", false},
	{"quorum.auth.learner.saslLoginContext", "QuorumLearner", false},
	{"quorum.auth.server.saslLoginContext", "QuorumServer", false},
	{"quorum.auth.kerberos.servicePrincipal", "zkquorum/localhost", false},
	{"admin.forceHttps", "true", true},
	{"admin.needClientAuth", "true", true},
	{"admin.portUnification", "true", true},
	{"audit.enable", "true", true},
	{"audit.impl.class", "com.example.Audit", true},
	{"java.security.auth.login.config", "/jaas.conf", false},
	// The JVM's own revocation switches (X509Util sets them for ssl.crl
	// and ssl.ocsp; an operator may pass them with -D).
	{"com.sun.net.ssl.checkRevocation", "true", false},
	{"com.sun.security.enableCRLDP", "true", false},
	{"ocsp.enable", "true", false},
}

// jvmProperties are the keys of apacheSecurityKeys that are JVM system
// properties under their own name, not zookeeper.<key>.
var jvmProperties = map[string]bool{
	"java.security.auth.login.config": true,
	"com.sun.net.ssl.checkRevocation": true,
	"com.sun.security.enableCRLDP":    true,
	"ocsp.enable":                     true,
}

// checkSecurity asserts that a security setting is either honoured (kept
// in Security) or refused with ErrRefused at pos, naming key.
func checkSecurity(t *testing.T, c *Config, err error, name, key, value, pos string) {
	t.Helper()
	k, ok := lookupSecurity(name, fromCfg)
	if !ok {
		t.Fatalf("%s is in no line of securityKeys", name)
	}
	if k.refusal(value) == nil {
		if err != nil {
			t.Fatalf("%s=%s is honoured, yet: %v", key, value, err)
		}
		if got := c.Security[name]; got != value {
			t.Fatalf("%s=%s is honoured, yet Security[%s] = %q", key, value, name, got)
		}
		return
	}
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("%s=%s: got %v, want a refusal", key, value, err)
	}
	if want := pos + ": " + key + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%s=%s: %q does not start with %q", key, value, err, want)
	}
	if _, kept := c.Security[name]; kept {
		t.Fatalf("%s refused but kept", key)
	}
}

// TestSecurityKeysHonouredOrRefused is the rule "never weaker than asked":
// every Apache 3.9 security setting, from zoo.cfg and as a -D flag where
// Apache reads one, either takes effect or stops the server with its
// position.
func TestSecurityKeysHonouredOrRefused(t *testing.T) {
	for _, tc := range apacheSecurityKeys {
		t.Run(tc.key, func(t *testing.T) {
			c, err := Parse("zoo.cfg", []byte("dataDir=/d\n"+tc.key+"="+tc.value+"\n"))
			checkSecurity(t, c, err, tc.key, tc.key, tc.value, "zoo.cfg:2")
			if !tc.prop && !jvmProperties[tc.key] {
				return
			}
			prop := "zookeeper." + tc.key
			if !tc.prop {
				prop = tc.key
			}
			c, _ = Parse("zoo.cfg", []byte("dataDir=/d\n"))
			err = c.ApplyJVMFlags("SERVER_JVMFLAGS", "-Xmx1g -D"+prop+"="+tc.value)
			checkSecurity(t, c, err, tc.key, "-D"+prop, tc.value, "$SERVER_JVMFLAGS (word 2)")
		})
	}
}

// TestSecurityValuesAskingForNothing: a security key set to a value that
// asks for no security, or for what Zoo has, does not stop the server.
func TestSecurityValuesAskingForNothing(t *testing.T) {
	c := mustCheck(t, `dataDir=/d
clientPort=2181
sslQuorum=false
quorum.auth.enableSasl=false
enforce.auth.enabled=false
authProvider.1=org.apache.zookeeper.server.auth.DigestAuthenticationProvider
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
audit.enable=false
`)
	if got := c.Security["sslQuorum"]; got != "false" {
		t.Errorf("sslQuorum kept as %q", got)
	}
	for _, k := range quorumBooleans {
		_, err := check(t, "dataDir=/d\nclientPort=2181\n"+k+"=yes\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), ":3: "+k) {
			t.Errorf("%s=yes: %v, want invalid at line 3 (Apache's parseBoolean)", k, err)
		}
	}
}

// TestJVMFlagsPrecedence follows Apache: a zoo.cfg key wins over its -D
// property (QuorumPeerConfig sets the property after the JVM starts), and
// of two -D flags the later wins (zkServer.sh puts JVMFLAGS after
// SERVER_JVMFLAGS).
func TestJVMFlagsPrecedence(t *testing.T) {
	c := mustCheck(t, "dataDir=/d\nclientPort=2181\nsslQuorum=false\nenforce.auth.enabled=false\n")
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", "-Dzookeeper.enforce.auth.enabled=true -Dzookeeper.ssl.allowReverseDnsLookup=true"); err == nil ||
		strings.Contains(err.Error(), "enforce.auth") || !strings.Contains(err.Error(), "-Dzookeeper.ssl.allowReverseDnsLookup") {
		t.Errorf("zoo.cfg should win for enforce.auth.enabled, ssl.allowReverseDnsLookup refused: %v", err)
	}
	if got := c.Security["enforce.auth.enabled"]; got != "false" || c.Auth.EnforceAuth {
		t.Errorf("enforce.auth.enabled = %q (EnforceAuth %v), want zoo.cfg's false", got, c.Auth.EnforceAuth)
	}
	// A honoured setting given only as a -D flag reaches its field, as
	// zoo.cfg's would.
	c = mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	flags := "-Dzookeeper.sessionRequireClientSASLAuth=true -Dzookeeper.superUser=admin " +
		"-Dzookeeper.authProvider.1=" + SASLProviderClass + " -Djava.security.auth.login.config=/etc/zk/jaas.conf"
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", flags); err != nil {
		t.Fatal(err)
	}
	if !c.Auth.SessionRequireClientSASLAuth || c.Auth.SuperUser != "admin" || !c.Auth.SASLProvider || c.Auth.JaasFile != "/etc/zk/jaas.conf" {
		t.Errorf("-D flags did not reach Config.Auth: %+v", c.Auth)
	}
	c = mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", "-Dzookeeper.client.portUnification=false"); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyJVMFlags("JVMFLAGS", "-Dzookeeper.client.portUnification=true"); !errors.Is(err, ErrRefused) && c.Security["client.portUnification"] != "true" {
		t.Errorf("the later flag must win: %v, %q", err, c.Security["client.portUnification"])
	}
}

// TestJVMFlagsSyntax: a word that is not a JVM option is an error; other
// options are ignored; zookeeper.* properties Zoo does not read and keys
// Apache reads only from zoo.cfg draw warnings.
func TestJVMFlagsSyntax(t *testing.T) {
	c := mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	err := c.ApplyJVMFlags("JVMFLAGS", `-Xmx1g -XX:+UseG1GC -server -Dlog4j.configuration=x -Dzookeeper.sslQuorum=true -Dzookeeper.foo=1 -Dzookeeper.jaas="a b" -D`)
	if !errors.Is(err, ErrJVMFlag) {
		t.Fatalf("got %v, want ErrJVMFlag", err)
	}
	want := []string{
		`$JVMFLAGS (word 8): b": config: unparseable JVM flag`,
		`$JVMFLAGS (word 9): -D: config: unparseable JVM flag`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from:\n%v", w, err)
		}
	}
	var warned []string
	for _, w := range c.Warnings {
		warned = append(warned, w.Key)
	}
	if got := strings.Join(warned, " "); got != "-Dzookeeper.sslQuorum -Dzookeeper.foo -Dzookeeper.jaas" {
		t.Errorf("warned about %q", got)
	}
}
