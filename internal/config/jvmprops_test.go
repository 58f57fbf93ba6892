package config

import (
	"strings"
	"testing"
)

// Apache reads these zoo.cfg keys as zookeeper.<key> system properties, so
// SERVER_JVMFLAGS may set them (go-zookeeper's own suite starts servers
// with -Dzookeeper.extendedTypesEnabled and a superDigest this way); a
// key set in zoo.cfg wins, with a warning.
func TestJVMFlagsSetPropertyKeys(t *testing.T) {
	for name := range propertyKeys {
		if handlers[name] == nil {
			t.Errorf("property key %s has no zoo.cfg handler", name)
		}
	}
	c := mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	flags := "-Dzookeeper.extendedTypesEnabled=true -Dzookeeper.DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU= -Dzookeeper.snapCount=500 -Dzookeeper.fsync.warningthresholdms=20"
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", flags); err != nil {
		t.Fatal(err)
	}
	if !c.ExtendedTypesEnabled || c.SuperDigest != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" || c.SnapCount != 500 || c.FsyncWarningThresholdMs != 20 {
		t.Errorf("extendedTypes %v, superDigest %q, snapCount %d, fsync.warningthresholdms %d: the -D flags were not applied",
			c.ExtendedTypesEnabled, c.SuperDigest, c.SnapCount, c.FsyncWarningThresholdMs)
	}

	c = mustCheck(t, "dataDir=/d\nclientPort=2181\nextendedTypesEnabled=false\n")
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", "-Dzookeeper.extendedTypesEnabled=true"); err != nil {
		t.Fatal(err)
	}
	if c.ExtendedTypesEnabled {
		t.Error("zoo.cfg's extendedTypesEnabled=false should win over the -D flag")
	}
	if n := len(c.Warnings); n == 0 || c.Warnings[n-1].Kind != Duplicate || !strings.Contains(c.Warnings[n-1].Msg, "wins") {
		t.Errorf("no warning that zoo.cfg wins: %v", c.Warnings)
	}

	c = mustCheck(t, "dataDir=/d\nclientPort=2181\n")
	if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", "-Dzookeeper.DigestAuthenticationProvider.superDigest=nocolon"); err == nil {
		t.Error("a malformed superDigest from a -D flag was accepted")
	}
}
