package config

import (
	"fmt"
	"strings"
)

// maxServerID is the largest server id: Zoo puts it in the top byte of
// session ids, as Apache does, and with extended types (TTL nodes) 0xff is
// reserved for TTL owners.
const maxServerID = 255

// Validate reports every problem in the configuration, each with the
// position of the key at fault. Call EnsureDefaults first. Keys whose value
// did not parse are not checked again.
func (c *Config) Validate() error {
	v := validator{c: c}
	v.basics()
	v.secureClient()
	v.sslQuorum()
	v.client()
	v.servers()
	v.ensemble()
	v.auth()
	return v.probs.err()
}

type validator struct {
	c     *Config
	probs Problems
}

func (v *validator) add(key string, err error) {
	if v.c.bad[key] {
		return
	}
	v.probs = append(v.probs, &Problem{Pos: v.c.Pos(key), Key: key, Err: err})
}

func (v *validator) basics() {
	c := v.c
	if c.TickTime <= 0 {
		v.add("tickTime", fmt.Errorf("%w: tickTime must be positive", ErrInvalid))
	}
	if c.DataDir == "" {
		v.add("dataDir", fmt.Errorf("%w: dataDir is not set", ErrMissing))
	}
	if c.MinSessionTimeout > c.MaxSessionTimeout && !c.bad["minSessionTimeout"] {
		v.add("maxSessionTimeout", fmt.Errorf("%w: minSessionTimeout %d is larger than maxSessionTimeout %d",
			ErrConflict, c.MinSessionTimeout, c.MaxSessionTimeout))
	}
	if c.MaxClientCnxns < 0 {
		v.add("maxClientCnxns", fmt.Errorf("%w: negative", ErrInvalid))
	}
	if c.MaxCnxns < 0 {
		v.add("maxCnxns", fmt.Errorf("%w: negative", ErrInvalid))
	}
	if c.ElectionAlg != DefaultElectionAlg {
		v.add("electionAlg", fmt.Errorf("%w: only electionAlg 3 is supported", ErrInvalid))
	}
	if c.SnapRetainCount < DefaultSnapRetainCount {
		v.add("autopurge.snapRetainCount", fmt.Errorf("%w: below the minimum %d", ErrInvalid, DefaultSnapRetainCount))
	}
	if c.JuteMaxBuffer <= 0 {
		v.add("jute.maxbuffer", fmt.Errorf("%w: must be positive", ErrInvalid))
	}
	if c.JuteMaxBufferExtraSize < MinJuteMaxBufferExtraSize {
		v.add("jute.maxbuffer.extrasize", fmt.Errorf("%w: below the minimum %d", ErrInvalid, MinJuteMaxBufferExtraSize))
	}
	if c.AdminServerPort < 0 || c.AdminServerPort > 65535 {
		v.add("admin.serverPort", fmt.Errorf("%w: port %d out of range", ErrInvalid, c.AdminServerPort))
	}
}

// client checks the client address, which may come from clientPort or from
// this server's server.N line.
func (v *validator) client() {
	c := v.c
	if c.bad["clientPort"] {
		return
	}
	if c.ClientPort < 0 || c.ClientPort > 65535 {
		v.add("clientPort", fmt.Errorf("%w: port %d out of range", ErrInvalid, c.ClientPort))
		return
	}
	if c.ClientPort == 0 {
		switch {
		case c.ClientPortAddress != "":
			v.add("clientPortAddress", fmt.Errorf("%w: clientPortAddress is set but clientPort is not", ErrMissing))
		case c.SecureClientPort == 0:
			v.add("clientPort", fmt.Errorf("%w: no client port: set clientPort, secureClientPort, or a ;clientPort on this server's server.N line", ErrMissing))
		}
		return
	}
	s, ok := c.Self()
	if !ok || s.ClientPort == 0 {
		return
	}
	same := c.ClientPort == s.ClientPort && (isWildcard(c.ClientPortAddress) || c.ClientPortAddress == s.ClientHost)
	if !same {
		v.add("clientPort", fmt.Errorf("%w: client address %s differs from %s on server.%d (%s)",
			ErrConflict, c.ClientAddr(), s.ClientAddr(), s.ID, s.Pos))
	}
}

func (v *validator) servers() {
	c := v.c
	limit := int64(maxServerID)
	if c.ExtendedTypesEnabled {
		limit--
	}
	seen := map[string]Server{}
	for _, s := range c.Servers {
		key := fmt.Sprintf("server.%d", s.ID)
		if s.ID < 1 || s.ID > limit {
			v.add(key, fmt.Errorf("%w: server id %d out of range 1-%d (it is the top byte of session ids, and raft reserves 0)",
				ErrInvalid, s.ID, limit))
		}
		for _, addr := range []string{s.QuorumAddr(), s.ElectionAddr()} {
			if isWildcard(s.Host) {
				break
			}
			if o, dup := seen[addr]; dup {
				v.add(key, fmt.Errorf("%w: address %s is also used by server.%d (%s)", ErrConflict, addr, o.ID, o.Pos))
			}
			seen[addr] = s
		}
	}
}

// ensemble checks what a distributed server needs, as Apache's
// parseDynamicConfig and checkValidity do.
func (v *validator) ensemble() {
	c := v.c
	voters, observers := c.Voters(), len(c.Servers)-c.Voters()
	switch {
	case len(c.Servers) == 0:
		return
	case voters == 0 && !c.StandaloneEnabled:
		v.add("standaloneEnabled", fmt.Errorf("%w: standaloneEnabled=false needs at least one participant", ErrConflict))
	case voters == 0:
		v.add(fmt.Sprintf("server.%d", c.Servers[0].ID), fmt.Errorf("%w: observers without participants", ErrConflict))
	case voters == 1 && c.StandaloneEnabled && observers > 0:
		v.add(fmt.Sprintf("server.%d", c.Servers[0].ID), fmt.Errorf("%w: observers without a quorum (one participant)", ErrConflict))
	}
	if !c.Distributed() {
		return
	}
	if c.InitLimit <= 0 {
		v.add("initLimit", fmt.Errorf("%w: initLimit is not set", ErrMissing))
	}
	if c.SyncLimit <= 0 {
		v.add("syncLimit", fmt.Errorf("%w: syncLimit is not set", ErrMissing))
	}
	if c.MyID == 0 {
		v.add("myid", fmt.Errorf("%w: the myid file is missing from dataDir %s", ErrMissing, c.DataDir))
	} else if _, ok := c.Self(); !ok {
		v.add("myid", fmt.Errorf("%w: myid is %d but there is no server.%d line", ErrConflict, c.MyID, c.MyID))
	}
}

// derivedWarnings adds the warnings that depend on several settings. It is
// idempotent, as EnsureDefaults may run more than once.
func (c *Config) derivedWarnings() {
	if c.warnedSingle || len(c.Servers) == 0 {
		return
	}
	if c.Voters() == 1 && c.StandaloneEnabled {
		c.warnedSingle = true
		s := c.Servers[0]
		c.warn(s.Pos, fmt.Sprintf("server.%d", s.ID), Adjusted, "only one server is listed: running standalone")
	}
}

// adoptPeerType makes PeerType agree with this server's server.N line, with
// a warning, as Apache's setupPeerType does.
func (c *Config) adoptPeerType() {
	s, ok := c.Self()
	if !ok || s.Type == c.PeerType {
		return
	}
	if _, set := c.pos["peerType"]; set {
		c.warn(c.Pos("peerType"), "peerType", Adjusted,
			fmt.Sprintf("%s, but server.%d says %s, which wins", c.PeerType, s.ID, s.Type))
	}
	c.PeerType = s.Type
}

// secureClient reads secureClientPort and secureClientPortAddress, kept in
// Security when honoured, as Apache's QuorumPeerConfig does.
func (v *validator) secureClient() {
	c := v.c
	port, ok := c.Security["secureClientPort"]
	if !ok {
		if _, ok := c.Security["secureClientPortAddress"]; ok {
			v.add("secureClientPortAddress", fmt.Errorf("%w: secureClientPortAddress is set but secureClientPort is not", ErrMissing))
		}
		return
	}
	p, err := parseJavaInt(port)
	if err == nil && (p <= 0 || p > 65535) {
		err = fmt.Errorf("%w: port %d out of range", ErrInvalid, p)
	}
	if err != nil {
		v.add("secureClientPort", err)
		return
	}
	c.SecureClientPort = p
	c.SecureClientPortAddress = c.Security["secureClientPortAddress"]
}

// sslQuorum and the other quorum security switches are parsed as
// QuorumPeerConfig.parseBoolean: true or false.
func (v *validator) sslQuorum() {
	for _, k := range quorumBooleans {
		if on, ok := v.c.Security[k]; ok && !strings.EqualFold(on, "true") && !strings.EqualFold(on, "false") {
			v.add(k, fmt.Errorf("%w: %q: choose true or false", ErrInvalid, on))
		}
	}
}

var quorumBooleans = []string{"sslQuorum", "portUnification", "sslQuorumReloadCertFiles",
	"quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl"}
