// Package member holds the ensemble membership as ZooKeeper keeps it in
// /zookeeper/config, and computes what a reconfig request changes.
//
// The text form is Apache ZooKeeper's (QuorumMaj.toString): one
// "server.N=host:quorumPort:electionPort:role[;clientHost:clientPort]" line
// per member in id order, then "version=<hex>". Parse reads it, String
// writes it, and Parse(m.String()) gives m back.
//
// Reconfig applies a reconfig request (ZooKeeper 3.5+ dynamic
// reconfiguration) to the current membership with Apache 3.8's rules
// (PrepRequestProcessor, case OpCode.reconfig), and Diff turns the old and
// new membership into the raft configuration changes that enact it.
//
// The package is pure: no I/O, no clock, no goroutines. Server lines are
// parsed by internal/config, so zoo.cfg and /zookeeper/config agree on
// what a server line means.
package member

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zoohq/zoo/internal/config"
)

// ErrInvalid is wrapped by every error Parse returns: the text is not a
// membership Zoo can run (a line that does not parse, a key other than
// server.N and version, an id out of range, or an unsafe host name).
var ErrInvalid = errors.New("member: invalid membership")

// MaxServerID is the largest server id. It mirrors internal/config's limit
// (the id is the top byte of session ids) and raft reserves 0.
const MaxServerID = 255

// source names the text in config's messages.
const source = "/zookeeper/config"

// Membership is the ensemble: every server, participants and observers.
type Membership struct {
	// Servers are sorted by ID, with no duplicate IDs. Their Pos is
	// zero: a membership is a value, not a place in a file.
	Servers []config.Server
	// Version is the config version, the zxid of the transaction that
	// made it (0 for a static zoo.cfg). /zookeeper/config prints it in
	// hex.
	Version int64
}

// Parse reads the /zookeeper/config text. Keys are read as Java properties,
// as Apache's QuorumMaj(Properties) does; a missing version line means
// version 0, as there. Unlike Apache it rejects group/weight keys
// (hierarchical quorums, which Zoo does not implement), duplicated keys,
// ids outside 1-MaxServerID, negative versions, and host names with
// characters no host name or IP literal has, so that what it accepts
// always prints back as the same text.
func Parse(text string) (Membership, error) {
	m, warnings, err := parseProperties(text)
	if err != nil {
		return Membership{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(warnings) > 0 {
		return Membership{}, fmt.Errorf("%w: %s", ErrInvalid, warnings[0])
	}
	if m.Version < 0 {
		return Membership{}, fmt.Errorf("%w: negative version %d", ErrInvalid, m.Version)
	}
	for _, s := range m.Servers {
		if err := checkServer(s); err != nil {
			return Membership{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return m, nil
}

// FromConfig is the membership a zoo.cfg (and its dynamic file) starts
// with.
func FromConfig(c *config.Config) Membership {
	m := Membership{Version: c.ConfigVersion}
	for _, s := range c.Servers {
		s.Pos = config.Pos{}
		m.Servers = append(m.Servers, s)
	}
	m.Servers = m.sorted()
	return m
}

// parseProperties reads server.N and version keys with internal/config's
// dynamic-file parser, the only exported path to its properties reader.
// It returns config's warnings (group/weight keys, duplicates) for the
// caller to judge.
func parseProperties(text string) (Membership, []config.Warning, error) {
	c, err := config.Parse(source, nil) // an empty Config ready for ParseDynamic
	if err != nil {
		return Membership{}, nil, err
	}
	if err := c.ParseDynamic(source, []byte(text)); err != nil {
		return Membership{}, nil, err
	}
	return FromConfig(c), c.Warnings, nil
}

// String renders m as /zookeeper/config holds it: a server.N line per
// member in id order, then "version=<hex>", with no trailing newline.
func (m Membership) String() string {
	var b strings.Builder
	for _, s := range m.sorted() {
		fmt.Fprintf(&b, "server.%d=%s\n", s.ID, s)
	}
	fmt.Fprintf(&b, "version=%x", m.Version)
	return b.String()
}

// sorted returns the servers in id order (they normally already are).
func (m Membership) sorted() []config.Server {
	if slices.IsSortedFunc(m.Servers, byID) {
		return m.Servers
	}
	return slices.SortedFunc(slices.Values(m.Servers), byID)
}

func byID(a, b config.Server) int {
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// Server returns the server with the given id.
func (m Membership) Server(id int64) (config.Server, bool) {
	for _, s := range m.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return config.Server{}, false
}

// Participants returns the voting members' ids, ascending.
func (m Membership) Participants() []int64 { return m.ids(config.Participant) }

// Observers returns the non-voting members' ids, ascending.
func (m Membership) Observers() []int64 { return m.ids(config.Observer) }

func (m Membership) ids(t config.LearnerType) []int64 {
	var out []int64
	for _, s := range m.sorted() {
		if s.Type == t {
			out = append(out, s.ID)
		}
	}
	return out
}

// ContainsQuorum reports whether ids include a majority of m's
// participants, as Apache's QuorumMaj.containsQuorum: more than half of
// the voters, counting each voter once and ignoring ids that do not vote.
func (m Membership) ContainsQuorum(ids []int64) bool {
	voters := m.Participants()
	n := 0
	for _, v := range voters {
		if slices.Contains(ids, v) {
			n++
		}
	}
	return n > len(voters)/2
}

// hostOK reports whether h looks like a host name or an IP literal
// (letters, digits, '.', '-', '_', and ':' and '%' for IPv6 with a zone).
// Anything else could not round-trip through the properties text or a
// comma-separated reconfig spec.
func hostOK(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '-', r == '_', r == ':', r == '%':
		default:
			return false
		}
	}
	return true
}

// checkServer checks what config.ParseServer leaves to Validate or does
// not check at all: the id range and the host names' characters.
func checkServer(s config.Server) error {
	if s.ID < 1 || s.ID > MaxServerID {
		return fmt.Errorf("server id %d out of range 1-%d", s.ID, MaxServerID)
	}
	if !hostOK(s.Host) {
		return fmt.Errorf("server.%d: bad host %q", s.ID, s.Host)
	}
	if s.ClientPort != 0 && !hostOK(s.ClientHost) {
		return fmt.Errorf("server.%d: bad client host %q", s.ID, s.ClientHost)
	}
	return nil
}
