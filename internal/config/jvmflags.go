package config

import (
	"fmt"
	"strings"
)

// JVMFlagVars are the environment variables whose -D flags Apache's
// zkServer.sh passes to the server, in the order it joins them
// (JVMFLAGS="$SERVER_JVMFLAGS $JVMFLAGS"): a later flag wins.
var JVMFlagVars = []string{"SERVER_JVMFLAGS", "JVMFLAGS"}

// ApplyJVMFlags reads the -D system properties of flags, the value of the
// environment variable named name, as Apache reads them. zkServer.sh
// expands the variable unquoted, so the shell splits it on white space and
// quotes are not interpreted; a word that is not a JVM option (such as the
// tail of a quoted value with a space) is an error. Security properties
// follow Apache's precedence: a key set in zoo.cfg wins, since
// QuorumPeerConfig copies it into the system property after the JVM
// starts; a property Apache reads only from zoo.cfg is ignored with a
// warning, as Apache ignores it. Other zookeeper.* properties draw a
// warning: Zoo does not read them. Call it after Load (or Default), once
// per variable in JVMFlagVars order.
func (c *Config) ApplyJVMFlags(name, flags string) error {
	var probs Problems
	for i, word := range strings.Fields(flags) {
		pos := Pos{File: fmt.Sprintf("$%s (word %d)", name, i+1)}
		prop, value, isProp, err := parseJVMWord(word)
		if err != nil {
			probs = append(probs, &Problem{Pos: pos, Key: word, Err: err})
			continue
		}
		if !isProp {
			continue
		}
		if err := c.setProperty(prop, value, pos); err != nil {
			probs = append(probs, &Problem{Pos: pos, Key: "-D" + prop, Err: err})
		}
	}
	return probs.err()
}

// parseJVMWord splits one word of a JVM command line. isProp reports a
// -Dname[=value] flag; other options (-Xmx1g, -XX:..., -server) are
// accepted and ignored.
func parseJVMWord(word string) (prop, value string, isProp bool, err error) {
	if !strings.HasPrefix(word, "-") {
		return "", "", false, fmt.Errorf("%w: not an option (a quoted value with spaces is split by the shell)", ErrJVMFlag)
	}
	rest, ok := strings.CutPrefix(word, "-D")
	if !ok {
		return "", "", false, nil
	}
	prop, value, _ = strings.Cut(rest, "=")
	if prop == "" {
		return "", "", false, fmt.Errorf("%w: -D without a property name", ErrJVMFlag)
	}
	return prop, value, true, nil
}

// setProperty applies one system property.
func (c *Config) setProperty(prop, value string, pos Pos) error {
	if prop == readOnlyProperty {
		c.setReadOnlyProperty(value, pos)
		return nil
	}
	name, zk := strings.CutPrefix(prop, "zookeeper.")
	k, ok := lookupSecurity(prop, func(s source) bool { return s == propOnly })
	if !ok && zk {
		k, ok = lookupSecurity(name, fromProp)
	}
	if !ok && zk && propertyKeys[name] {
		return c.setPropertyKey(prop, name, value, pos)
	}
	if !ok {
		if _, cfgKey := lookupSecurity(name, func(s source) bool { return s == cfgOnly }); zk && cfgKey {
			c.warn(pos, "-D"+prop, Unsupported, "Apache reads "+name+" only from zoo.cfg; this property is ignored, as in Apache")
		} else if zk {
			c.warn(pos, "-D"+prop, Unsupported, "system property not read by Zoo; ignored")
		}
		return nil
	}
	if k.from == propOnly {
		name = prop
	}
	if p, set := c.pos[name]; set && p.Line > 0 {
		c.warn(pos, "-D"+prop, Duplicate, fmt.Sprintf("%s in %s wins, as in Apache", name, p))
		return nil
	}
	if err := k.refusal(value); err != nil {
		return err
	}
	if c.Security == nil {
		c.Security = map[string]string{}
	}
	c.Security[name] = value
	c.pos[name] = pos
	return c.applySecurity(name, value, pos)
}

// propertyKeys are the zoo.cfg keys Apache reads as the system property
// zookeeper.<key>: zoo.cfg's copy is set as that property when the server
// starts (QuorumPeerConfig does so with keys it does not parse itself), so
// -Dzookeeper.<key> in SERVER_JVMFLAGS sets them too, and zoo.cfg wins.
var propertyKeys = map[string]bool{
	"extendedTypesEnabled":                     true,
	"DigestAuthenticationProvider.superDigest": true,
	"enforceQuota":                             true,
	"skipACL":                                  true,
	"snapCount":                                true,
	"snapSizeLimitInKb":                        true,
	"preAllocSize":                             true,
	"fsync.warningthresholdms":                 true,
	"forceSync":                                true,
	"globalOutstandingLimit":                   true,
	"4lw.commands.whitelist":                   true,
	"admin.enableServer":                       true,
	"admin.serverAddress":                      true,
	"admin.serverPort":                         true,
	"admin.idleTimeout":                        true,
	"admin.commandURL":                         true,
}

// setPropertyKey applies -Dzookeeper.<name> through name's zoo.cfg
// handler, unless zoo.cfg set name.
func (c *Config) setPropertyKey(prop, name, value string, pos Pos) error {
	if p, set := c.pos[name]; set && p.Line > 0 {
		c.warn(pos, "-D"+prop, Duplicate, fmt.Sprintf("%s in %s wins, as in Apache", name, p))
		return nil
	}
	if err := handlers[name](c, value, pos); err != nil {
		return err
	}
	c.pos[name] = pos
	return nil
}
