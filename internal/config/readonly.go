package config

import "strings"

// Read-only mode. Apache reads readonlymode.enabled only as a system
// property (QuorumPeer: Boolean.getBoolean), so Zoo honours it from
// -Dreadonlymode.enabled in SERVER_JVMFLAGS / JVMFLAGS. In zoo.cfg Apache
// turns the unknown key into the property zookeeper.readonlymode.enabled,
// which nothing reads: the key has no effect there, and Zoo says so.

// readOnlyProperty is the system property that enables read-only mode.
const readOnlyProperty = "readonlymode.enabled"

// setReadOnlyProperty applies -Dreadonlymode.enabled as Boolean.getBoolean
// reads it: "true" in any case enables, anything else disables.
func (c *Config) setReadOnlyProperty(value string, pos Pos) {
	c.ReadOnlyMode = strings.EqualFold(value, "true")
	if !c.ReadOnlyMode && !strings.EqualFold(value, "false") {
		c.warn(pos, "-D"+readOnlyProperty, Adjusted, "value is not true: read-only mode is off, as in Apache")
	}
}

// readOnlyCfgKey is readonlymode.enabled written in zoo.cfg: ignored, as
// Apache ignores it, with a warning naming where it takes effect.
func readOnlyCfgKey(c *Config, _ string, pos Pos) error {
	c.warn(pos, readOnlyProperty, Unsupported,
		"Apache reads this only as a system property (-Dreadonlymode.enabled=true in SERVER_JVMFLAGS); ignored in zoo.cfg, as in Apache")
	return nil
}

// localSessionsKey is localSessionsEnabled. Zoo's sessions are global;
// the setting lets a read-only member give new sessions as local
// sessions, as Apache's does. Elsewhere Zoo keeps its global sessions
// (what Apache gives with localSessionsUpgradingEnabled once a session
// creates an ephemeral node), and says so.
func localSessionsKey(c *Config, value string, pos Pos) error {
	if err := boolKey(func(c *Config) *bool { return &c.LocalSessionsEnabled })(c, value, pos); err != nil {
		return err
	}
	if c.LocalSessionsEnabled {
		c.warn(pos, "localSessionsEnabled", Unsupported,
			"sessions are global in Zoo; local sessions are given only by a read-only member (readonlymode.enabled)")
	}
	return nil
}
