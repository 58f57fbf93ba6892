package zk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// Four-letter words are the commands a server answers on its client
// port with plain text ("ruok", "srvr", "cons", "mntr", ...); a server
// allows only those in its 4lw.commands.whitelist (by default "srvr").
// The helpers here send one, read the answer to the end and parse it.

// Errors of the four-letter-word helpers.
var (
	// ErrFourLetterNotAllowed means the server refused the word: it is
	// not in its 4lw.commands.whitelist.
	ErrFourLetterNotAllowed = errors.New("zk: four-letter word not in the server's whitelist")
	// ErrFourLetterReply means the answer could not be parsed.
	ErrFourLetterReply = errors.New("zk: malformed four-letter-word answer")
)

// maxFourLetterReply bounds an answer (a "cons" of many connections is
// long, but not without limit).
const maxFourLetterReply = 64 << 20

// FourLetterWord sends word to the server at addr (host:port) and returns
// its whole answer. ctx bounds the exchange.
func FourLetterWord(ctx context.Context, addr, word string) (string, error) {
	if len(word) != 4 {
		return "", fmt.Errorf("zk: four-letter word %q: not four letters", word)
	}
	nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	if _, err := io.WriteString(nc, word); err != nil {
		return "", orCtx(ctx, err)
	}
	b, err := io.ReadAll(io.LimitReader(nc, maxFourLetterReply))
	if err != nil {
		return "", orCtx(ctx, err)
	}
	s := string(b)
	if strings.Contains(s, "is not executed because it is not in the whitelist") {
		return "", fmt.Errorf("%w: %s", ErrFourLetterNotAllowed, word)
	}
	return s, nil
}

func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Ruok reports whether the server at addr is running ("imok"). An
// ensemble member without a quorum may still say imok; use Srvr for its
// mode.
func Ruok(ctx context.Context, addr string) (bool, error) {
	s, err := FourLetterWord(ctx, addr, "ruok")
	if err != nil {
		return false, err
	}
	return s == "imok", nil
}

// ServerStats is the answer to "srvr".
type ServerStats struct {
	Version     string // "3.8.0-..., built on ..."
	MinLatency  int64  // ms
	AvgLatency  float64
	MaxLatency  int64
	Received    int64
	Sent        int64
	Connections int64
	Outstanding int64
	Zxid        int64
	Mode        string // "standalone", "leader", "follower", "observer", "read-only"
	NodeCount   int64
}

// Srvr asks the server at addr for its statistics ("srvr").
func Srvr(ctx context.Context, addr string) (ServerStats, error) {
	s, err := FourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return ServerStats{}, err
	}
	return ParseSrvr(s)
}

// ParseSrvr parses the text of a "srvr" answer (also the first part of a
// "stat" answer). Lines it does not know are skipped.
func ParseSrvr(s string) (ServerStats, error) {
	var st ServerStats
	seen := 0
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "Zookeeper version":
			st.Version = v
		case "Latency min/avg/max":
			err = parseLatency(v, &st)
		case "Received":
			st.Received, err = strconv.ParseInt(v, 10, 64)
		case "Sent":
			st.Sent, err = strconv.ParseInt(v, 10, 64)
		case "Connections":
			st.Connections, err = strconv.ParseInt(v, 10, 64)
		case "Outstanding":
			st.Outstanding, err = strconv.ParseInt(v, 10, 64)
		case "Zxid":
			st.Zxid, err = parseHex(v)
		case "Mode":
			st.Mode = v
		case "Node count":
			st.NodeCount, err = strconv.ParseInt(v, 10, 64)
		default:
			continue
		}
		if err != nil {
			return ServerStats{}, fmt.Errorf("%w: srvr %q: %w", ErrFourLetterReply, sc.Text(), err)
		}
		seen++
	}
	if seen == 0 || st.Mode == "" {
		return ServerStats{}, fmt.Errorf("%w: srvr: no statistics in %q", ErrFourLetterReply, truncate(s))
	}
	return st, nil
}

func parseLatency(v string, st *ServerStats) error {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return errors.New("want min/avg/max")
	}
	var err [3]error
	st.MinLatency, err[0] = strconv.ParseInt(parts[0], 10, 64)
	st.AvgLatency, err[1] = strconv.ParseFloat(parts[1], 64)
	st.MaxLatency, err[2] = strconv.ParseInt(parts[2], 10, 64)
	return errors.Join(err[:]...)
}

func parseHex(v string) (int64, error) {
	u, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
	return int64(u), err
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// ConnInfo is one connection in a "cons" answer. Fields holds every
// key=value pair as the server wrote it ("queued", "recved", "sent",
// "sid", "lop", "est", "to", "lcxid", "lzxid", "lresp", "llat",
// "minlat", "avglat", "maxlat"); the common ones are also parsed.
type ConnInfo struct {
	Addr      string // the client's address ("127.0.0.1:53214")
	Interest  int    // the server's interest ops on the socket
	Queued    int64
	Received  int64
	Sent      int64
	SessionID int64 // 0 for a connection without a session (the cons itself)
	Fields    map[string]string
}

// Cons lists the connections of the server at addr ("cons").
func Cons(ctx context.Context, addr string) ([]ConnInfo, error) {
	s, err := FourLetterWord(ctx, addr, "cons")
	if err != nil {
		return nil, err
	}
	return ParseCons(s)
}

// ParseCons parses the text of a "cons" answer: one line per connection,
// " /127.0.0.1:53214[1](queued=0,recved=1,sent=1,sid=0x...,...)".
func ParseCons(s string) ([]ConnInfo, error) {
	var out []ConnInfo
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, maxFourLetterReply)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		ci, err := parseConsLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: cons %q: %w", ErrFourLetterReply, truncate(line), err)
		}
		out = append(out, ci)
	}
	return out, sc.Err()
}

func parseConsLine(line string) (ConnInfo, error) {
	open := strings.IndexByte(line, '[')
	shut := strings.IndexByte(line, ']')
	paren := strings.IndexByte(line, '(')
	if open <= 0 || shut < open || paren != shut+1 || !strings.HasSuffix(line, ")") {
		return ConnInfo{}, errors.New("want /addr[ops](key=value,...)")
	}
	ci := ConnInfo{Addr: strings.TrimPrefix(line[:open], "/"), Fields: map[string]string{}}
	var err error
	if ci.Interest, err = strconv.Atoi(line[open+1 : shut]); err != nil {
		return ConnInfo{}, err
	}
	for _, kv := range strings.Split(line[paren+1:len(line)-1], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return ConnInfo{}, fmt.Errorf("%q is not key=value", kv)
		}
		ci.Fields[k] = v
	}
	var errs [4]error
	num := func(k string, dst *int64, i int) {
		if v, ok := ci.Fields[k]; ok {
			*dst, errs[i] = strconv.ParseInt(v, 10, 64)
		}
	}
	num("queued", &ci.Queued, 0)
	num("recved", &ci.Received, 1)
	num("sent", &ci.Sent, 2)
	if v, ok := ci.Fields["sid"]; ok {
		ci.SessionID, errs[3] = parseHex(v)
	}
	return ci, errors.Join(errs[:]...)
}

// Mntr returns the server's monitoring variables ("mntr"): zk_version,
// zk_server_state, zk_znode_count, zk_avg_latency, ... as the server
// wrote them.
func Mntr(ctx context.Context, addr string) (map[string]string, error) {
	s, err := FourLetterWord(ctx, addr, "mntr")
	if err != nil {
		return nil, err
	}
	return ParseMntr(s)
}

// ParseMntr parses the text of a "mntr" answer: one "key<TAB>value" per
// line.
func ParseMntr(s string) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, maxFourLetterReply)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: mntr line %q has no tab", ErrFourLetterReply, truncate(line))
		}
		m[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: mntr: %w", ErrFourLetterReply, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: mntr: empty answer", ErrFourLetterReply)
	}
	return m, nil
}
