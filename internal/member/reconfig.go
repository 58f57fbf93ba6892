package member

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/jute"
)

// Options are the ensemble settings that change what Reconfig accepts.
type Options struct {
	// StandaloneEnabled is zoo.cfg's standaloneEnabled (default true).
	// With it a new configuration needs at least 2 participants, since
	// one participant would make the server restart standalone; without
	// it, 1 (Apache 3.8 PrepRequestProcessor, OpCode.reconfig: "new
	// configuration must include at least 2 followers" / "1 follower").
	StandaloneEnabled bool
}

// Reconfig is Options{StandaloneEnabled: true}.Reconfig, Apache's default.
func Reconfig(cur Membership, joining, leaving, newMembers string) (Membership, error) {
	return Options{StandaloneEnabled: true}.Reconfig(cur, joining, leaving, newMembers)
}

// Reconfig computes the membership a reconfig request asks for, following
// Apache 3.8's PrepRequestProcessor (case OpCode.reconfig). An empty
// string means the field is absent.
//
//   - Incremental: leaving is a comma-separated list of ids, removed first
//     (an id that is not a member is ignored); joining is a comma-separated
//     list of "server.N=host:quorumPort:electionPort[:role];[clientHost:]clientPort"
//     specs, added next. A joiner with an existing id replaces that
//     server's line, which is how a server changes role or address. A
//     joiner must name a client port, and its addresses may not clash
//     with another member's (loopback and wildcard hosts excepted).
//   - Bulk: newMembers is the whole new membership, comma- or
//     newline-separated server.N=... specs; a version key in it is ignored.
//   - Both at once: the bulk change wins and joining/leaving are ignored,
//     as in Apache's server (zkCli refuses to send both; that is the
//     client's rule). None at all is allowed: the result is cur's
//     servers, and the caller still commits a new version.
//
// Every malformed spec or id, and a result with too few participants
// (see Options.StandaloneEnabled), is jute.BadArguments; errors.Is and
// errors.As see the code through the wrapping.
//
// The result's Version is 0: the caller sets it to the zxid of the
// transaction that commits the change, as Apache does. The rest of Apache's
// checks are the caller's too, in this order: reconfigEnabled
// (ReconfigDisabled), a reconfig already in flight (ReconfigInProgress),
// the request's curConfigId against the last seen version unless it is -1
// (BadVersion), then, after Reconfig succeeds, that the leader and the
// participants connected and synced with it form a quorum of the new
// configuration (RequireQuorum, NewConfigNoQuorum), and last WRITE
// permission on /zookeeper/config; an error that wraps ErrBeyondApache
// comes after the permission check.
func (o Options) Reconfig(cur Membership, joining, leaving, newMembers string) (Membership, error) {
	var next Membership
	var err error
	if strings.TrimSpace(newMembers) != "" {
		next, err = parseBulk(newMembers)
	} else {
		next, err = applyIncremental(cur, joining, leaving)
	}
	if err != nil {
		return Membership{}, err
	}
	return next, o.checkVoters(next)
}

// badArgs is jute.BadArguments with a reason for the log.
func badArgs(format string, args ...any) error {
	return fmt.Errorf("member: reconfig: %w: %s", jute.BadArguments, fmt.Sprintf(format, args...))
}

// ErrBeyondApache is wrapped, beside jute.BadArguments, by the errors of a
// reconfig that only Zoo refuses: a server id above MaxServerID, a host
// name with characters no host name has, group or weight keys. Apache
// would take such a request on to its permission check, so the caller
// checks permission before it answers one of these (txn's prepReconfig).
var ErrBeyondApache = errors.New("member: beyond what Zoo runs")

// beyondApache is badArgs for a limit Apache does not have.
func beyondApache(format string, args ...any) error {
	return fmt.Errorf("member: reconfig: %w (%w): %s", jute.BadArguments, ErrBeyondApache, fmt.Sprintf(format, args...))
}

// checkVoters is Apache's only quorum rule at prep time: the new
// configuration's participants, counted alone. It does not compare with
// the old majority: leaving 1 and 4 from {1,2,3 participants, 4 observer}
// is fine because 2 and 3 remain.
func (o Options) checkVoters(m Membership) error {
	minVoters := 1
	if o.StandaloneEnabled {
		minVoters = 2
	}
	if n := len(m.Participants()); n < minVoters {
		return badArgs("new configuration must include at least %d participants, has %d", minVoters, n)
	}
	return nil
}

// splitTrim is Apache's StringUtils.split: split on sep, trim each piece,
// drop the empty ones.
func splitTrim(s, sep string) []string {
	var out []string
	for p := range strings.SplitSeq(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseBulk reads newMembers as Apache does: commas become newlines and
// the result is read as a dynamic config file (server.N and version keys
// only; a duplicated key's last value wins). Apache then builds a
// hierarchical quorum from group/weight keys; Zoo has none, so they are
// BadArguments. Apache does not require client ports or distinct
// addresses here, so neither does Zoo.
func parseBulk(newMembers string) (Membership, error) {
	m, warnings, err := parseProperties(strings.ReplaceAll(newMembers, ",", "\n"))
	if err != nil {
		return Membership{}, badArgs("newMembers: %v", err)
	}
	for _, w := range warnings {
		if w.Kind != config.Duplicate {
			return Membership{}, beyondApache("newMembers: %s", w)
		}
	}
	for _, s := range m.Servers {
		if err := checkServer(s); err != nil {
			return Membership{}, beyondApache("newMembers: %v", err)
		}
	}
	m.Version = 0
	return m, nil
}

// applyIncremental removes the leaving ids, then adds or replaces the
// joiners, in request order.
func applyIncremental(cur Membership, joining, leaving string) (Membership, error) {
	next := make(map[int64]config.Server, len(cur.Servers))
	for _, s := range cur.Servers {
		s.Pos = config.Pos{}
		next[s.ID] = s
	}
	for _, l := range splitTrim(leaving, ",") {
		id, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return Membership{}, badArgs("leaving server id %q is not a number", l)
		}
		delete(next, id)
	}
	for _, j := range splitTrim(joining, ",") {
		s, err := parseJoiner(j)
		if err != nil {
			return Membership{}, err
		}
		for _, o := range next {
			if o.ID != s.ID {
				if err := addressClash(s, o); err != nil {
					return Membership{}, err
				}
			}
		}
		next[s.ID] = s
	}
	m := Membership{Servers: make([]config.Server, 0, len(next))}
	for _, s := range next {
		m.Servers = append(m.Servers, s)
	}
	m.Servers = m.sorted()
	if len(m.Servers) == 0 {
		m.Servers = nil
	}
	return m, nil
}

// parseJoiner reads one "server.N=spec" joiner. Like Apache, the id is the
// number after the key's last '.', and the value must have exactly one '='
// before it.
func parseJoiner(j string) (config.Server, error) {
	parts := splitTrim(j, "=")
	if len(parts) != 2 {
		return config.Server{}, badArgs("joining %q: want server.N=host:port:port[:role];[host:]port", j)
	}
	key := parts[0]
	id, err := strconv.ParseInt(key[strings.LastIndexByte(key, '.')+1:], 10, 64)
	if err != nil {
		return config.Server{}, badArgs("joining %q: server id is not a number", j)
	}
	s, err := config.ParseServer(id, parts[1])
	if err != nil {
		return config.Server{}, badArgs("joining %q: %v", j, err)
	}
	if s.ClientPort == 0 {
		// Apache: "each server should have 3 ports specified".
		return config.Server{}, badArgs("joining %q: a joining server needs a client port (;[host:]port)", j)
	}
	if err := checkServer(s); err != nil {
		return config.Server{}, beyondApache("joining %q: %v", j, err)
	}
	return s, nil
}

// addressClash is Apache's QuorumServer.checkAddressDuplicate: none of
// joiner's quorum, election and client addresses may equal any of o's,
// except loopback and wildcard ones, which many servers on one machine
// share. Apache compares resolved addresses; Zoo, being pure, compares
// host names case-insensitively.
func addressClash(joiner, o config.Server) error {
	for _, a := range addrs(joiner) {
		for _, b := range addrs(o) {
			if a == b {
				return badArgs("%s of server.%d conflicts with server.%d", a, joiner.ID, o.ID)
			}
		}
	}
	return nil
}

// addrs lists s's addresses that take part in the clash check.
func addrs(s config.Server) []string {
	var out []string
	add := func(host string, port int) {
		if port != 0 && !special(host) {
			out = append(out, strings.ToLower(host)+"|"+strconv.Itoa(port))
		}
	}
	add(s.Host, s.QuorumPort)
	add(s.ClientHost, s.ClientPort)
	add(s.Host, s.ElectionPort)
	return out
}

// special reports loopback and wildcard hosts, which Apache leaves out of
// the clash check (InetAddress.isLoopbackAddress, isAnyLocalAddress).
func special(host string) bool {
	h := strings.ToLower(host)
	switch h {
	case "localhost", "::1", "0:0:0:0:0:0:0:1", "0.0.0.0", "::", "0:0:0:0:0:0:0:0":
		return true
	}
	return strings.HasPrefix(h, "127.")
}

// RequireQuorum is Apache's Leader.isQuorumSynced check for a new
// configuration: synced (the leader itself, if it votes in next, and the
// participants connected and synced with it) must contain a quorum of
// next, or the reconfig fails with jute.NewConfigNoQuorum. Observers and
// unknown ids do not count.
func RequireQuorum(next Membership, synced []int64) error {
	if next.ContainsQuorum(synced) {
		return nil
	}
	return fmt.Errorf("member: reconfig: %w: there must be a connected and synced quorum in the new configuration", jute.NewConfigNoQuorum)
}
