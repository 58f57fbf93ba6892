package cli

import (
	"os"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/zk"
)

// configNode holds the ensemble's dynamic configuration.
const configNode = "/zookeeper/config"

// cmdConfig is "config [-c] [-w] [-s]": the configuration, or with -c
// only the client connect string ("version host:port,...").
func cmdConfig(s *shell, c *cmdLine) error {
	ctx, cancel := s.ctx()
	defer cancel()
	var data []byte
	var st zk.Stat
	var err error
	if c.has('w') {
		var ch <-chan zk.Event
		data, st, ch, err = s.client.GetW(ctx, configNode)
		if err == nil {
			s.addWatch(ch)
		}
	} else {
		data, st, err = s.client.Get(ctx, configNode)
	}
	if err != nil {
		return err
	}
	text := string(data)
	if c.has('c') {
		text = clientConfig(text)
	}
	s.printf("%s\n", text)
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// clientConfig is ConfigUtils.getClientConfigStr: the config version and
// the servers' client addresses ("server.1=h:p1:p2;[ch:]cp").
func clientConfig(config string) string {
	var version string
	var servers []string
	for _, line := range strings.Split(config, "\n") {
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok:
		case key == "version":
			version = value
		case strings.HasPrefix(key, "server."):
			if _, client, ok := strings.Cut(value, ";"); ok {
				if !strings.Contains(client, ":") {
					client = "0.0.0.0:" + client
				}
				servers = append(servers, client)
			}
		}
	}
	return version + " " + strings.Join(servers, ",")
}

// cmdReconfig is zkCli's reconfig: incremental (-add, -remove) or bulk
// (-members, -file), from config version -v.
func cmdReconfig(s *shell, c *cmdLine) error {
	opts := map[string]string{}
	for i := 0; i+1 < len(c.args); i += 2 {
		opts[c.args[i][1:]] = c.args[i+1]
	}
	if len(c.args)%2 != 0 || len(opts) == 0 {
		return errUsage
	}
	_, add := opts["add"]
	_, remove := opts["remove"]
	_, members := opts["members"]
	_, file := opts["file"]
	if (add || remove) && (members || file) {
		return failure("Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	}
	if file {
		m, err := membersFromFile(opts["file"])
		if err != nil {
			return err
		}
		opts["members"] = m
	}
	return s.reconfig(c, opts["add"], opts["remove"], opts["members"])
}

func (s *shell) reconfig(c *cmdLine, joining, leaving, members string) error {
	from := int64(-1)
	if v, ok := c.opts['v']; ok {
		n, err := strconv.ParseInt(v, 16, 64)
		if err != nil {
			return failure("-v must be followed by a long (configuration version)")
		}
		from = n
	}
	ctx, cancel := s.ctx()
	defer cancel()
	data, st, err := s.client.Reconfig(ctx, joining, leaving, members, from)
	if err != nil {
		return err
	}
	s.printf("Committed new configuration:\n%s\n", data)
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// membersFromFile reads the server lines of a dynamic config file.
func membersFromFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	var m []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "server.") {
			m = append(m, line)
		}
	}
	return strings.Join(m, ","), nil
}
