package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAuthKeys(t *testing.T) {
	c := mustCheck(t, `dataDir=/tmp/z
clientPort=2181
authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
authProvider.2=org.apache.zookeeper.server.auth.DigestAuthenticationProvider
superUser=admin
allowSaslFailedClients=true
enforce.auth.enabled=true
enforce.auth.schemes= sasl , digest,,sasl
kerberos.removeHostFromPrincipal=true
audit.enable=true
audit.file=/var/log/zk-audit.log
audit.maxFileSize=4096
`)
	a := c.Auth
	if !a.SASLProvider || a.SuperUser != "admin" || !a.AllowSASLFailedClients || !a.EnforceAuth ||
		!slices.Equal(a.EnforceAuthSchemes, []string{"sasl", "digest"}) || !a.KerberosRemoveHost ||
		a.KerberosRemoveRealm || !a.Audit || a.AuditFile != "/var/log/zk-audit.log" || a.AuditMaxFileSize != 4096 {
		t.Errorf("Auth = %+v", a)
	}
	if !slices.Equal(c.EnforcedSchemes(), []string{"sasl", "digest"}) {
		t.Errorf("EnforcedSchemes = %v", c.EnforcedSchemes())
	}
	for _, w := range c.Warnings {
		t.Errorf("unexpected warning %v", w)
	}
}

func TestSessionRequireClientSASLAuthWins(t *testing.T) {
	c := mustCheck(t, "dataDir=/tmp/z\nclientPort=2181\nauthProvider.sasl="+SASLProviderClass+
		"\nsessionRequireClientSASLAuth=true\nenforce.auth.enabled=false\nenforce.auth.schemes=digest\n")
	if !slices.Equal(c.EnforcedSchemes(), []string{"sasl"}) {
		t.Errorf("EnforcedSchemes = %v, want [sasl]", c.EnforcedSchemes())
	}
}

func TestEnforceAuthRefused(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"enforce.auth.enabled=true\n", "zoo.cfg:3: enforce.auth.enabled: "},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=sasl\n", "zoo.cfg:4: enforce.auth.schemes: config: invalid value: authentication scheme sasl is not available"},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=kerberos\nauthProvider.1=" + SASLProviderClass + "\n", "scheme kerberos is not available"},
		{"sessionRequireClientSASLAuth=true\n", "zoo.cfg:3: sessionRequireClientSASLAuth: config: invalid value: authentication scheme sasl is not available"},
		{"enforce.auth.enabled=yes\n", "zoo.cfg:3: enforce.auth.enabled"},
	} {
		_, err := check(t, "dataDir=/tmp/z\nclientPort=2181\n"+tc.cfg)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v\nwant %q", tc.cfg, err, tc.want)
		}
	}
}

// TestAuthProviderOtherClassIsRefused: a provider class Zoo does not have
// (a custom one) asks for authentication Zoo cannot give, so the server
// refuses to start rather than run without it (DESIGN decision 14).
func TestAuthProviderOtherClassIsRefused(t *testing.T) {
	_, err := check(t, "dataDir=/tmp/z\nclientPort=2181\nauthProvider.1=com.example.MyProvider\n")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "zoo.cfg:3: authProvider.1") {
		t.Errorf("custom provider: %v, want refused at zoo.cfg:3", err)
	}
	c := mustCheck(t, "dataDir=/tmp/z\nclientPort=2181\nauthProvider.1="+SASLProviderClass+"\n")
	if !c.Auth.SASLProvider {
		t.Error("authProvider.1 naming the SASL provider did not turn it on")
	}
}
