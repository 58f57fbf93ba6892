// Package dockerenv configures a server from the environment variables of
// the official zookeeper Docker image (ZOO_MY_ID, ZOO_SERVERS,
// ZOO_TICK_TIME, ...), so that a compose file or manifest written for that
// image runs Zoo unchanged.
//
// It follows that image's docker-entrypoint.sh: when $ZOO_CONF_DIR/zoo.cfg
// does not exist, one is written from the variables (a mounted zoo.cfg
// wins, and the variables are then ignored); when $ZOO_DATA_DIR/myid does
// not exist, it is written from ZOO_MY_ID (default 1). The defaults are the
// ones the image's Dockerfile sets. Where the image would write a file that
// the server then rejects, Build refuses first and names the variable at
// fault, so nothing broken is left behind in a volume.
//
// Build is pure (the environment and host name are passed in); Apply does
// the file system.
package dockerenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/config"
)

// ErrInvalid is returned, wrapped, for a variable that cannot be turned into
// a valid configuration.
var ErrInvalid = errors.New("dockerenv: invalid environment")

// defaults are the official image's ENV lines.
var defaults = map[string]string{
	"ZOO_CONF_DIR":                  "/conf",
	"ZOO_DATA_DIR":                  "/data",
	"ZOO_DATA_LOG_DIR":              "/datalog",
	"ZOO_TICK_TIME":                 "2000",
	"ZOO_INIT_LIMIT":                "5",
	"ZOO_SYNC_LIMIT":                "2",
	"ZOO_AUTOPURGE_PURGEINTERVAL":   "0",
	"ZOO_AUTOPURGE_SNAPRETAINCOUNT": "3",
	"ZOO_MAX_CLIENT_CNXNS":          "60",
	"ZOO_STANDALONE_ENABLED":        "true",
	"ZOO_ADMINSERVER_ENABLED":       "true",
	// The image's entrypoint falls back to a single server whose client
	// port is on every interface.
	"ZOO_SERVERS": "server.1=localhost:2888:3888;2181",
	"ZOO_MY_ID":   "1",
}

// keys maps the single-valued variables to zoo.cfg keys, in the order the
// image's entrypoint writes them.
var keys = []struct{ env, key string }{
	{"ZOO_DATA_DIR", "dataDir"},
	{"ZOO_DATA_LOG_DIR", "dataLogDir"},
	{"ZOO_TICK_TIME", "tickTime"},
	{"ZOO_INIT_LIMIT", "initLimit"},
	{"ZOO_SYNC_LIMIT", "syncLimit"},
	{"ZOO_AUTOPURGE_SNAPRETAINCOUNT", "autopurge.snapRetainCount"},
	{"ZOO_AUTOPURGE_PURGEINTERVAL", "autopurge.purgeInterval"},
	{"ZOO_MAX_CLIENT_CNXNS", "maxClientCnxns"},
	{"ZOO_STANDALONE_ENABLED", "standaloneEnabled"},
	{"ZOO_ADMINSERVER_ENABLED", "admin.enableServer"},
}

// MyIDFromHostname is Zoo's own variable (the official image has none like
// it): when "true", myid is one more than the ordinal that ends the host
// name, so the pods of a Kubernetes StatefulSet (zoo-0, zoo-1, ...) get
// myid 1, 2, ... from one pod template. ZOO_MY_ID must then be unset.
const MyIDFromHostname = "ZOO_MY_ID_FROM_HOSTNAME"

// configVars are the variables that only shape a generated zoo.cfg; a
// mounted zoo.cfg makes them irrelevant.
var configVars = []string{
	"ZOO_DATA_LOG_DIR", "ZOO_TICK_TIME", "ZOO_INIT_LIMIT", "ZOO_SYNC_LIMIT",
	"ZOO_AUTOPURGE_SNAPRETAINCOUNT", "ZOO_AUTOPURGE_PURGEINTERVAL", "ZOO_MAX_CLIENT_CNXNS",
	"ZOO_STANDALONE_ENABLED", "ZOO_ADMINSERVER_ENABLED", "ZOO_SERVERS",
	"ZOO_4LW_COMMANDS_WHITELIST", "ZOO_CFG_EXTRA",
}

// Plan is what Apply writes: the files, and their contents, that the
// environment asks for.
type Plan struct {
	ConfPath string // $ZOO_CONF_DIR/zoo.cfg: the file the server reads
	Config   string // its contents, written only if it does not exist
	DataDir  string // $ZOO_DATA_DIR, created if missing
	MyIDPath string // $ZOO_DATA_DIR/myid
	MyID     int64  // written only if MyIDPath does not exist
	// MyIDFrom names the variable MyID came from: ZOO_MY_ID (or its
	// default) or ZOO_MY_ID_FROM_HOSTNAME.
	MyIDFrom string
	// ConfigVars are the zoo.cfg-shaping variables that are set; they
	// are ignored, with a note, when zoo.cfg is mounted.
	ConfigVars []string
	// Generated says Config holds a zoo.cfg to write: Build was told none
	// exists.
	Generated bool
}

// ConfPath is the zoo.cfg the environment points at,
// $ZOO_CONF_DIR/zoo.cfg; the caller checks whether it exists before Build.
func ConfPath(getenv func(string) string) string {
	dir := getenv("ZOO_CONF_DIR")
	if dir == "" {
		dir = defaults["ZOO_CONF_DIR"]
	}
	return filepath.Join(dir, "zoo.cfg")
}

// line is one generated zoo.cfg line and the variable it came from.
type line struct{ text, from string }

// Build turns the environment (getenv returns "" for an unset variable)
// into a Plan. hostname is the machine's host name, used only with
// ZOO_MY_ID_FROM_HOSTNAME. confExists says whether $ZOO_CONF_DIR/zoo.cfg
// exists already: then no zoo.cfg is generated and the variables that
// would shape it are not looked at. A generated zoo.cfg is parsed and
// validated as the server will, and every problem is reported against the
// variable that produced it.
func Build(getenv func(string) string, hostname string, confExists bool) (Plan, error) {
	get := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return defaults[k]
	}
	var errs []error
	for _, k := range []string{"ZOO_CONF_DIR", "ZOO_DATA_DIR"} {
		if strings.ContainsAny(getenv(k), "\r\n") {
			errs = append(errs, fmt.Errorf("%w: %s contains a line break", ErrInvalid, k))
		}
	}
	p := Plan{
		ConfPath: ConfPath(getenv),
		DataDir:  get("ZOO_DATA_DIR"),
		MyIDPath: filepath.Join(get("ZOO_DATA_DIR"), "myid"),
	}
	id, err := myID(getenv, hostname)
	if err != nil {
		errs = append(errs, err)
	}
	p.MyID, p.MyIDFrom = id, "ZOO_MY_ID"
	if getenv(MyIDFromHostname) == "true" {
		p.MyIDFrom = MyIDFromHostname
	}
	if confExists {
		for _, k := range configVars {
			if getenv(k) != "" {
				p.ConfigVars = append(p.ConfigVars, k)
			}
		}
		return p, errors.Join(errs...)
	}
	lines, err := generate(get, getenv)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Plan{}, errors.Join(errs...)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text + "\n")
	}
	p.Config, p.Generated = b.String(), true
	if err := check(p, lines); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// myID reads ZOO_MY_ID, or derives the id from the host name.
func myID(getenv func(string) string, hostname string) (int64, error) {
	fromHost := getenv(MyIDFromHostname)
	switch fromHost {
	case "", "false":
	case "true":
		if getenv("ZOO_MY_ID") != "" {
			return 0, fmt.Errorf("%w: set ZOO_MY_ID or %s=true, not both", ErrInvalid, MyIDFromHostname)
		}
		i := strings.LastIndexByte(hostname, '-')
		n, err := strconv.ParseInt(hostname[i+1:], 10, 64)
		if i < 0 || err != nil || n < 0 {
			return 0, fmt.Errorf("%w: %s=true but host name %q does not end in -<ordinal>", ErrInvalid, MyIDFromHostname, hostname)
		}
		return checkID(MyIDFromHostname, n+1)
	default:
		return 0, fmt.Errorf("%w: %s=%q: choose true or false", ErrInvalid, MyIDFromHostname, fromHost)
	}
	v := getenv("ZOO_MY_ID")
	if v == "" {
		v = defaults["ZOO_MY_ID"]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: ZOO_MY_ID=%q is not a number", ErrInvalid, v)
	}
	return checkID("ZOO_MY_ID", n)
}

// checkID holds a server id to the range zoo.cfg's server.N lines allow.
func checkID(from string, n int64) (int64, error) {
	if n < 1 || n > 255 {
		return 0, fmt.Errorf("%w: %s gives myid %d, outside 1-255", ErrInvalid, from, n)
	}
	return n, nil
}

// generate writes zoo.cfg's lines in the order of the image's entrypoint.
// ZOO_SERVERS and ZOO_CFG_EXTRA hold whitespace-separated key=value
// entries, one line each, as the entrypoint's unquoted for loops split
// them.
func generate(get, getenv func(string) string) ([]line, error) {
	var out []line
	var errs []error
	for _, k := range keys {
		v := get(k.env)
		if strings.ContainsAny(v, "\r\n") {
			// The image would write a second line nobody asked for.
			errs = append(errs, fmt.Errorf("%w: %s contains a line break", ErrInvalid, k.env))
		}
		out = append(out, line{k.key + "=" + v, k.env})
	}
	entries := func(env string, want func(key string) error) {
		for _, e := range strings.Fields(get(env)) {
			key, _, ok := strings.Cut(e, "=")
			if !ok || key == "" {
				errs = append(errs, fmt.Errorf("%w: %s entry %q is not key=value", ErrInvalid, env, e))
				continue
			}
			if err := want(key); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s entry %q: %w", ErrInvalid, env, e, err))
				continue
			}
			out = append(out, line{e, env})
		}
	}
	entries("ZOO_SERVERS", func(key string) error {
		if !strings.HasPrefix(key, "server.") {
			return errors.New("want server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]")
		}
		return nil
	})
	if w := getenv("ZOO_4LW_COMMANDS_WHITELIST"); strings.ContainsAny(w, "\r\n") {
		errs = append(errs, fmt.Errorf("%w: ZOO_4LW_COMMANDS_WHITELIST contains a line break", ErrInvalid))
	} else if w != "" {
		out = append(out, line{"4lw.commands.whitelist=" + w, "ZOO_4LW_COMMANDS_WHITELIST"})
	}
	entries("ZOO_CFG_EXTRA", func(string) error { return nil })
	return out, errors.Join(errs...)
}

// check parses and validates the generated zoo.cfg as the server will and
// reports each problem against the variable behind its line.
func check(p Plan, lines []line) error {
	c, perr := config.Parse(p.ConfPath, []byte(p.Config))
	c.MyID = p.MyID
	c.EnsureDefaults()
	all := config.Join(perr, c.Validate())
	var probs config.Problems
	if !errors.As(all, &probs) {
		return all
	}
	errs := make([]error, 0, len(probs))
	for _, pr := range probs {
		missingClient := pr.Key == "clientPort" && errors.Is(pr.Err, config.ErrMissing)
		if missingClient && len(probs) > 1 {
			continue // a consequence of a bad or missing server.N line
		}
		from := "the generated zoo.cfg"
		switch l := pr.Pos.Line; {
		case l >= 1 && l <= len(lines):
			from = lines[l-1].from
		case pr.Key == "myid":
			from = p.MyIDFrom
		}
		msg := pr.Err.Error()
		if pr.Key != "" {
			msg = pr.Key + ": " + msg
		}
		if missingClient {
			// Apache 3.5+ takes the client port from the server's own
			// line; compose files written for 3.4 images lack it.
			from = "ZOO_SERVERS"
			msg += " (end each entry with ;2181, or add clientPort=2181 to ZOO_CFG_EXTRA)"
		}
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalid, from, msg))
	}
	return errors.Join(errs...)
}

// Result says what Apply did.
type Result struct {
	WroteConfig bool // false: a zoo.cfg was there already and is used as is
	WroteMyID   bool // false: a myid was there already
	// KeptMyID is the id in an existing myid file when it differs from
	// the one the environment gives; the file wins.
	KeptMyID string
}

// Apply writes the zoo.cfg and the myid file the plan holds, each only if
// it does not exist yet, and creates the directories they live in. An
// existing file is never touched: a mounted zoo.cfg or a myid in a data
// volume wins over the environment, as in the official image.
func Apply(p Plan) (Result, error) {
	var r Result
	var err error
	if p.Generated {
		if err := os.MkdirAll(filepath.Dir(p.ConfPath), 0o755); err != nil {
			return r, fmt.Errorf("dockerenv: %w", err)
		}
		if r.WroteConfig, err = writeNew(p.ConfPath, p.Config); err != nil {
			return r, err
		}
	}
	if err := os.MkdirAll(p.DataDir, 0o755); err != nil {
		return r, fmt.Errorf("dockerenv: %w", err)
	}
	want := strconv.FormatInt(p.MyID, 10)
	if r.WroteMyID, err = writeNew(p.MyIDPath, want+"\n"); err != nil || r.WroteMyID {
		return r, err
	}
	b, err := os.ReadFile(p.MyIDPath)
	if err != nil {
		return r, fmt.Errorf("dockerenv: %w", err)
	}
	if got := strings.TrimSpace(string(b)); got != want {
		r.KeptMyID = got
	}
	return r, nil
}

// writeNew creates path with data unless it exists, and syncs it: a
// half-written myid or zoo.cfg would stop the server at its next start.
func writeNew(path, data string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dockerenv: %w", err)
	}
	_, err = f.WriteString(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return false, fmt.Errorf("dockerenv: %w", err)
	}
	return true, nil
}
