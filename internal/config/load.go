package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Load reads the zoo.cfg at path, the dynamic configuration file it names
// (if any) and the myid file in its dataDir (if any), fills defaults and
// validates. The error lists every problem (Problems), or wraps the
// os error when path cannot be read (errors.Is(err, fs.ErrNotExist)). The
// configuration is returned even with problems, so callers can print its
// Warnings too.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, perr := Parse(path, data)
	errs := []error{perr}
	if c.DynamicConfigFile != "" && !c.bad["dynamicConfigFile"] {
		errs = append(errs, c.loadDynamic(c.DynamicConfigFile))
	}
	if c.DataDir != "" {
		id, ok, err := LoadMyID(c.DataDir)
		switch {
		case err != nil:
			errs = append(errs, &Problem{Pos: Pos{File: filepath.Join(c.DataDir, "myid")}, Key: "myid", Err: err})
			c.bad["myid"] = true
		case ok:
			c.MyID = id
			c.pos["myid"] = Pos{File: filepath.Join(c.DataDir, "myid"), Line: 1}
		}
	}
	c.EnsureDefaults()
	errs = append(errs, c.Validate())
	return c, Join(errs...)
}

// loadDynamic reads a dynamic configuration file into c.
func (c *Config) loadDynamic(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &Problem{Pos: c.Pos("dynamicConfigFile"), Key: "dynamicConfigFile", Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	return c.ParseDynamic(path, data)
}

// ParseDynamic reads a dynamic configuration file (Apache's
// zoo.cfg.dynamic.N) into c: server.N lines and a hex version, nothing else,
// as Apache's parseDynamicConfig requires. Its servers replace c.Servers.
func (c *Config) ParseDynamic(name string, data []byte) error {
	props, probs := parseProperties(name, string(data))
	props = c.dedup(name, props)
	servers := map[int64]Server{}
	for _, p := range props {
		key, value := javaTrim(p.key), javaTrim(p.value)
		pos := Pos{name, p.line}
		c.pos[key] = pos
		var err error
		switch {
		case strings.HasPrefix(key, "server."):
			err = addServer(servers, key, value, pos)
		case key == "version":
			err = versionKey(c, value, pos)
		case strings.HasPrefix(key, "group") || strings.HasPrefix(key, "weight"):
			c.warn(pos, key, Unsupported, "hierarchical quorums are not supported; Zoo uses a plain majority of the participants")
		default:
			err = fmt.Errorf("%w: only server.N and version belong in a dynamic config file", ErrInvalid)
		}
		if err != nil {
			c.bad[key] = true
			probs = append(probs, &Problem{Pos: pos, Key: key, Err: err})
		}
	}
	c.Servers = sortedServers(servers)
	sortByLine(probs)
	return probs.err()
}

// LoadMyID reads the myid file in dataDir: this server's id on the first
// line. ok is false if there is no such file (a standalone server needs
// none). Apache reads the line with Long.parseLong and no trimming; Zoo
// trims surrounding whitespace.
func LoadMyID(dataDir string) (id int64, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dataDir, "myid"))
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", ErrMyID, err)
	}
	id, err = ParseMyID(data)
	return id, err == nil, err
}

// ParseMyID parses the contents of a myid file.
func ParseMyID(data []byte) (int64, error) {
	line, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
	s := strings.TrimSpace(string(line))
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: server id %q is not a number", ErrMyID, s)
	}
	if id < 1 || id > maxServerID {
		return 0, fmt.Errorf("%w: server id %d out of range 1-%d", ErrMyID, id, maxServerID)
	}
	return id, nil
}
