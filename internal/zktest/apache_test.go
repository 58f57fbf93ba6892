package zktest

import (
	"slices"
	"strings"
	"testing"
)

// The settings map onto zoo.cfg keys and JVM system properties the way
// Apache 3.8 reads them.
func TestApacheSettings(t *testing.T) {
	ports := []int{2181, 2888, 3888, 2889, 3889, 2890, 3890}
	for _, tc := range []struct {
		name      string
		a         Apache
		cfg, flag []string
		noCfg     []string
	}{
		{
			name:  "defaults",
			cfg:   []string{"tickTime=2000\n", "clientPort=2181\n", "4lw.commands.whitelist=*\n", "maxClientCnxns=0\n"},
			noCfg: []string{"server.1=", "extendedTypesEnabled"},
		},
		{
			name: "options",
			a: Apache{TickTimeMs: 500, MinSessionTimeoutMs: 1000, MaxSessionTimeoutMs: 9000, ExtendedTypes: true,
				SuperDigest: "super:x", EnforceQuota: true, ContainerCheckIntervalMs: 100},
			cfg: []string{"tickTime=500\n", "minSessionTimeout=1000\n", "maxSessionTimeout=9000\n", "extendedTypesEnabled=true\n"},
			flag: []string{"-Dzookeeper.DigestAuthenticationProvider.superDigest=super:x",
				"-Dzookeeper.enforceQuota=true", "-Dznode.container.checkIntervalMs=100"},
		},
		{
			name: "read-only ensemble member",
			a:    Apache{ReadOnly: true},
			cfg: []string{"localSessionsEnabled=true\n", "server.1=127.0.0.1:2888:3888\n",
				"server.3=127.0.0.1:2890:3890\n"},
			flag: []string{"-Dreadonlymode.enabled=true"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.a.config("/d", ports)
			for _, want := range tc.cfg {
				if !strings.Contains(cfg, want) {
					t.Errorf("zoo.cfg lacks %q:\n%s", want, cfg)
				}
			}
			for _, not := range tc.noCfg {
				if strings.Contains(cfg, not) {
					t.Errorf("zoo.cfg has %q:\n%s", not, cfg)
				}
			}
			flags := tc.a.jvmFlags()
			for _, want := range tc.flag {
				if !slices.Contains(flags, want) {
					t.Errorf("JVM flags %v lack %q", flags, want)
				}
			}
		})
	}
}
