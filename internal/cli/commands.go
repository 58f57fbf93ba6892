package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// command describes one zkCli command: its syntax, as zkCli's help lists
// it, and what it does.
type command struct {
	syntax   string // after the name, as in zkCli's help
	flags    string // options without a value
	argFlags string // options taking a value
	// group lists options of which at most one may be given (commons-cli
	// OptionGroup); required says one of them must be.
	group    string
	required bool
	min, max int  // positional arguments
	offline  bool // runs without a live session
	run      func(s *shell, c *cmdLine) error
}

// cmdLine is a parsed command line.
type cmdLine struct {
	name string
	args []string        // positional arguments
	opts map[byte]string // options given, with their value ("" if none)
}

func (c *cmdLine) has(o byte) bool { _, ok := c.opts[o]; return ok }

// commands is zkCli 3.8's command set.
var commands map[string]*command

func init() {
	commands = map[string]*command{
		"addWatch":             {syntax: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", argFlags: "m", min: 1, max: 1, run: cmdAddWatch},
		"addauth":              {syntax: "scheme auth", min: 1, max: 2, run: cmdAddAuth},
		"close":                {offline: true, run: cmdClose},
		"config":               {syntax: "[-c] [-w] [-s]", flags: "cws", run: cmdConfig},
		"connect":              {syntax: "host:port", offline: true, max: 1, run: cmdConnect},
		"create":               {syntax: "[-s] [-e] [-c] [-t ttl] path [data] [acl]", flags: "sec", argFlags: "t", min: 1, max: 3, run: cmdCreate},
		"delete":               {syntax: "[-v version] path", argFlags: "v", min: 1, max: 1, run: cmdDelete},
		"deleteall":            {syntax: "path [-b batch size]", argFlags: "b", min: 1, max: 1, run: cmdDeleteAll},
		"delquota":             {syntax: "[-n|-b|-N|-B] path", flags: "nbNB", group: "nbNB", min: 1, max: 1, run: cmdDelQuota},
		"get":                  {syntax: "[-s] [-w] path", flags: "sw", min: 1, max: 1, run: cmdGet},
		"getAcl":               {syntax: "[-s] path", flags: "s", min: 1, max: 1, run: cmdGetACL},
		"getAllChildrenNumber": {syntax: "path", min: 1, max: 1, run: cmdAllChildren},
		"getEphemerals":        {syntax: "path", max: 1, run: cmdEphemerals},
		"history":              {offline: true, run: cmdHistory},
		"listquota":            {syntax: "path", min: 1, max: 1, run: cmdListQuota},
		"ls":                   {syntax: "[-s] [-w] [-R] path", flags: "swR", min: 1, max: 1, run: cmdLs},
		"printwatches":         {syntax: "on|off", offline: true, max: 1, run: cmdPrintWatches},
		"quit":                 {offline: true, run: cmdQuit},
		"reconfig":             {flags: "s", argFlags: "v", max: -1, syntax: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]", run: cmdReconfig},
		"redo":                 {syntax: "cmdno", offline: true, min: 1, max: 1},
		"removewatches":        {syntax: "path [-c|-d|-a] [-l]", flags: "cdal", min: 1, max: 1, run: cmdRemoveWatches},
		"set":                  {syntax: "[-s] [-v version] path data", flags: "s", argFlags: "v", min: 2, max: 2, run: cmdSet},
		"setAcl":               {syntax: "[-s] [-v version] [-R] path acl", flags: "sR", argFlags: "v", min: 2, max: 2, run: cmdSetACL},
		"setquota":             {syntax: "-n|-b|-N|-B val path", argFlags: "nbNB", group: "nbNB", required: true, min: 1, max: 1, run: cmdSetQuota},
		"stat":                 {syntax: "[-w] path", flags: "w", min: 1, max: 1, run: cmdStat},
		"sync":                 {syntax: "path", min: 1, max: 1, run: cmdSync},
		"version":              {offline: true, run: cmdVersion},
		"whoami":               {run: cmdWhoAmI},
	}
	// redo runs other commands, so it cannot refer to commands statically.
	commands["redo"].run = cmdRedo
}

// usage is the command's line in zkCli's help.
func usage(name string) string {
	return name + " " + commands[name].syntax
}

// execute runs one command line and returns its exit status.
func (s *shell) execute(args []string) int {
	cmd, ok := commands[args[0]]
	if !ok {
		// This is also zkCli's "help": an unknown command that shows
		// the usage.
		s.printUsage()
		s.errorf("Command not found: Command not found %s\n", args[0])
		return exitNotFound
	}
	c, err := parseLine(cmd, args)
	if err != nil {
		if errors.Is(err, errUsage) {
			err = failure(usage(args[0]))
		}
		s.errorf("%v\n", err)
		return exitError
	}
	if !cmd.offline && !s.alive() {
		s.printf("Not connected\n")
		return exitError
	}
	if err := cmd.run(s, c); err != nil {
		s.report(c, err)
		return exitError
	}
	return exitOK
}

// report prints a command's error as zkCli does.
func (s *shell) report(c *cmdLine, err error) {
	switch {
	case errors.Is(err, errSilent):
		return
	case errors.Is(err, errUsage):
		s.errorf("%s\n", usage(c.name))
		return
	}
	s.errorf("%s\n", message(err))
}

// parseLine splits args into options and positional arguments the way
// commons-cli's PosixParser does for zkCli: options may come anywhere.
func parseLine(cmd *command, args []string) (*cmdLine, error) {
	c := &cmdLine{name: args[0], opts: map[byte]string{}}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			c.args = append(c.args, a)
			continue
		}
		n, err := c.option(cmd, args[i:])
		if err != nil {
			return nil, err
		}
		i += n
	}
	if err := c.checkGroup(cmd); err != nil {
		return nil, err
	}
	if len(c.args) < cmd.min || (cmd.max >= 0 && len(c.args) > cmd.max) {
		return nil, errUsage
	}
	return c, nil
}

// option parses the option at rest[0] (possibly several bundled flags,
// "-se") and returns how many more arguments it used.
func (c *cmdLine) option(cmd *command, rest []string) (int, error) {
	a := rest[0]
	if len(a) == 2 && strings.IndexByte(cmd.argFlags, a[1]) >= 0 {
		if len(rest) < 2 {
			return 0, fail("org.apache.commons.cli.MissingArgumentException: Missing argument for option: %c", a[1])
		}
		c.opts[a[1]] = rest[1]
		return 1, nil
	}
	// A reconfig-style long option ("-add") is one option, not a bundle.
	if c.name == "reconfig" && len(a) > 2 {
		if len(rest) < 2 {
			return 0, fail("org.apache.commons.cli.MissingArgumentException: Missing argument for option: %s", a[1:])
		}
		c.args = append(c.args, a, rest[1])
		return 1, nil
	}
	for _, f := range []byte(a[1:]) {
		if strings.IndexByte(cmd.flags, f) < 0 {
			return 0, fail("org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: %s", a)
		}
		c.opts[f] = ""
	}
	return 0, nil
}

// checkGroup enforces the command's exclusive option group.
func (c *cmdLine) checkGroup(cmd *command) error {
	var seen []byte
	for _, f := range []byte(cmd.group) {
		if c.has(f) {
			seen = append(seen, f)
		}
	}
	if len(seen) > 1 {
		return fail("org.apache.commons.cli.AlreadySelectedException: The option '%c' was specified but an option from this group has already been selected: '%c'", seen[1], seen[0])
	}
	if cmd.required && len(seen) == 0 {
		return failure("org.apache.commons.cli.MissingOptionException: Missing required option: [-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	}
	return nil
}

// alive is zkCli's check before a server command: a session that is
// closed or dead gets "Not connected"; one still connecting is tried.
func (s *shell) alive() bool {
	return s.stateName() != "CLOSED" && s.stateName() != "AUTH_FAILED"
}

// printUsage is zkCli's help text, on stderr as zkCli prints it.
func (s *shell) printUsage() {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("ZooKeeper -server host:port -client-configuration properties-file cmd args\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t%s\n", usage(n))
	}
	s.errorf("%s", b.String())
}

func cmdQuit(s *shell, _ *cmdLine) error {
	s.quit = true
	return nil
}

func cmdVersion(s *shell, _ *cmdLine) error {
	s.printf("ZooKeeper CLI version: %s\n", Version)
	return nil
}

func cmdConnect(s *shell, c *cmdLine) error {
	addr := s.server
	if len(c.args) > 0 {
		addr = c.args[0]
	}
	if err := s.connect(addr); err != nil {
		return err
	}
	s.connected()
	return nil
}

// cmdClose ends the session; zkCli's watcher then reports Closed.
func cmdClose(s *shell, _ *cmdLine) error {
	if s.client == nil {
		return nil
	}
	s.closeClient()
	s.event("Closed", "None", "null")
	return nil
}

// cmdHistory lists the last eleven commands, this one included, as zkCli.
func cmdHistory(s *shell, _ *cmdLine) error {
	for i := max(s.count-11, 0); i < s.count; i++ {
		s.printf("%d - %s\n", i, s.history[i])
	}
	return nil
}

// cmdRedo runs an earlier command again; the history then shows that
// command in place of the "redo".
func cmdRedo(s *shell, c *cmdLine) error {
	n, err := strconv.Atoi(c.args[0])
	line, ok := s.history[n]
	if err != nil || n < 0 || n >= s.count || !ok {
		return failure("Command index out of range")
	}
	args := tokenize(line)
	if args[0] == "redo" {
		return failure("No redoing redos")
	}
	s.history[s.count-1] = line
	if s.execute(args) != exitOK {
		return errSilent
	}
	return nil
}

// errSilent is a failure already reported.
var errSilent = errors.New("cli: failed")

// tokenize splits a line as zkCli does: on white space, with '...' and
// "..." quoting an argument that contains spaces (quotes removed).
func tokenize(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		switch {
		case line[i] == ' ' || line[i] == '\t':
			i++
		case line[i] == '"' || line[i] == '\'':
			end := strings.IndexByte(line[i+1:], line[i])
			if end < 0 {
				out = append(out, line[i+1:])
				return out
			}
			out = append(out, line[i+1:i+1+end])
			i += end + 2
		default:
			end := strings.IndexAny(line[i:], " \t")
			if end < 0 {
				end = len(line) - i
			}
			out = append(out, line[i:i+end])
			i += end
		}
	}
	return out
}

// quoteArgs turns one-shot arguments back into a line that tokenize
// splits the same way.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case a == "" || strings.ContainsAny(a, " \t") && !strings.Contains(a, `"`):
			out[i] = `"` + a + `"`
		case strings.ContainsAny(a, " \t"):
			out[i] = "'" + a + "'"
		default:
			out[i] = a
		}
	}
	return out
}
