package config

import (
	"fmt"
	"strconv"
	"strings"
)

// LearnerType is a server's role in the ensemble.
type LearnerType int

const (
	// Participant votes (a raft voter).
	Participant LearnerType = iota
	// Observer replicates without voting (a raft learner).
	Observer
)

func (t LearnerType) String() string {
	if t == Observer {
		return "observer"
	}
	return "participant"
}

func parseLearnerType(s string) (LearnerType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "participant":
		return Participant, nil
	case "observer":
		return Observer, nil
	}
	return 0, fmt.Errorf("%w: unrecognised peer type %q (want participant or observer)", ErrInvalid, s)
}

// Server is one server.N line:
// server.N=host:quorumPort:electionPort[:participant|:observer][;[clientHost:]clientPort]
type Server struct {
	ID           int64
	Host         string // as written; an IPv6 literal without its brackets
	QuorumPort   int
	ElectionPort int
	Type         LearnerType
	// ClientHost and ClientPort come from the part after ';'. ClientPort
	// is 0 when there is none; ClientHost is "0.0.0.0" when only a port
	// is given, as in Apache.
	ClientHost string
	ClientPort int
	Pos        Pos
}

// joinHostPort is net.JoinHostPort, which this package may not import.
func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// QuorumAddr is host:quorumPort, the server-to-server (raft) address.
func (s Server) QuorumAddr() string { return joinHostPort(s.Host, s.QuorumPort) }

// ElectionAddr is host:electionPort.
func (s Server) ElectionAddr() string { return joinHostPort(s.Host, s.ElectionPort) }

// ClientAddr is clientHost:clientPort, or "" if the line names no client
// port.
func (s Server) ClientAddr() string {
	if s.ClientPort == 0 {
		return ""
	}
	return joinHostPort(s.ClientHost, s.ClientPort)
}

// String renders the line's value as Apache's QuorumServer.toString does
// (and so as the conf four-letter word prints membership), e.g.
// "127.0.0.1:2888:3888:participant;127.0.0.1:2181".
func (s Server) String() string {
	out := joinHostPort(s.Host, s.QuorumPort) + ":" + strconv.Itoa(s.ElectionPort) + ":" + s.Type.String()
	if s.ClientPort != 0 {
		out += ";" + s.ClientAddr()
	}
	return out
}

// serverForm is Apache's message for a line of the wrong shape.
const serverForm = "does not have the form server_config or server_config;client_config " +
	"where server_config is host:port:port or host:port:port:type and client_config is port or host:port"

// javaSplit is String.split with a literal separator: trailing empty strings
// are removed.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// hostAndPort is Apache's ConfigUtils.getHostAndPort: split on ':' unless
// the string starts with a bracketed IPv6 literal. Unlike Apache it requires
// the ':' right after ']' instead of silently skipping a character.
func hostAndPort(s string) ([]string, error) {
	if !strings.HasPrefix(s, "[") {
		return javaSplit(s, ":"), nil
	}
	i := strings.Index(s, "]")
	if i < 0 {
		return nil, fmt.Errorf("%w: %q starts with '[' but has no matching ']:'", ErrInvalid, s)
	}
	host := s[1:i]
	rest := s[i+1:]
	if rest == "" {
		return []string{host}, nil
	}
	if rest[0] != ':' || len(rest) == 1 {
		return nil, fmt.Errorf("%w: %q: want a port after ']:'", ErrInvalid, s)
	}
	return append([]string{host}, javaSplit(rest[1:], ":")...), nil
}

func parsePort(what, s string) (int, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%w: %s %q is not a port number (1-65535)", ErrInvalid, what, s)
	}
	return int(p), nil
}

// ParseServer parses the value of a server.N line as Apache's
// QuorumPeer.QuorumServer does. Zoo is stricter in three places: ports must
// be 1-65535, the host may not be empty, and multiple addresses ('|',
// Apache's opt-in multiAddress feature) are rejected.
func ParseServer(id int64, value string) (Server, error) {
	s := Server{ID: id}
	value = javaTrim(value)
	parts := javaSplit(value, ";")
	if len(parts) == 0 || len(parts) > 2 {
		return s, fmt.Errorf("%w: %q %s", ErrInvalid, value, serverForm)
	}
	if strings.Contains(parts[0], "|") {
		return s, fmt.Errorf("%w: %q: multiple addresses per server are not supported", ErrInvalid, value)
	}
	sp, err := hostAndPort(parts[0])
	if err != nil {
		return s, err
	}
	if len(sp) < 3 || len(sp) > 4 {
		return s, fmt.Errorf("%w: %q %s", ErrInvalid, value, serverForm)
	}
	s.Host = sp[0]
	if s.Host == "" {
		return s, fmt.Errorf("%w: %q: empty host", ErrInvalid, value)
	}
	if s.QuorumPort, err = parsePort("quorum port", sp[1]); err != nil {
		return s, err
	}
	if s.ElectionPort, err = parsePort("election port", sp[2]); err != nil {
		return s, err
	}
	if s.QuorumPort == s.ElectionPort {
		return s, fmt.Errorf("%w: %q: quorum and election ports must be different", ErrInvalid, value)
	}
	if len(sp) == 4 {
		if s.Type, err = parseLearnerType(sp[3]); err != nil {
			return s, err
		}
	}
	if len(parts) == 2 {
		cp, err := hostAndPort(parts[1])
		if err != nil {
			return s, err
		}
		if len(cp) == 0 || len(cp) > 2 {
			return s, fmt.Errorf("%w: %q %s", ErrInvalid, value, serverForm)
		}
		s.ClientHost = "0.0.0.0"
		if len(cp) == 2 {
			s.ClientHost = cp[0]
		}
		if s.ClientPort, err = parsePort("client port", cp[len(cp)-1]); err != nil {
			return s, err
		}
	}
	return s, nil
}
