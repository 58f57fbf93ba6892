package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/dockerenv"
)

// runDockerEntrypoint is "zoo docker-entrypoint [server flags]", the
// container image's command: it writes $ZOO_CONF_DIR/zoo.cfg and
// $ZOO_DATA_DIR/myid from the official zookeeper image's ZOO_*
// variables, each only if it is not there yet, then runs the server on
// that zoo.cfg.
func runDockerEntrypoint(args []string, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	p, err := prepareFromEnv(log, os.Getenv)
	if err != nil {
		return err
	}
	return runServer(append(slices.Clone(args), p.ConfPath))
}

// prepareFromEnv builds and applies the plan, and says what it did.
func prepareFromEnv(log *slog.Logger, getenv func(string) string) (dockerenv.Plan, error) {
	host, _ := os.Hostname()
	conf := dockerenv.ConfPath(getenv)
	_, err := os.Stat(conf)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return dockerenv.Plan{}, err
	}
	p, err := dockerenv.Build(getenv, host, exists)
	if err != nil {
		return p, err
	}
	r, err := dockerenv.Apply(p)
	if err != nil {
		return p, err
	}
	switch {
	case r.WroteConfig:
		log.Info("docker-entrypoint: wrote zoo.cfg from the environment", "path", p.ConfPath)
	case len(p.ConfigVars) > 0:
		log.Warn("docker-entrypoint: using the existing zoo.cfg; these variables are ignored",
			"path", p.ConfPath, "vars", strings.Join(p.ConfigVars, ","))
	default:
		log.Info("docker-entrypoint: using the existing zoo.cfg", "path", p.ConfPath)
	}
	if r.WroteMyID {
		log.Info("docker-entrypoint: wrote myid", "path", p.MyIDPath, "id", p.MyID)
	} else if r.KeptMyID != "" {
		log.Warn("docker-entrypoint: keeping the existing myid, which differs from the environment's",
			"path", p.MyIDPath, "myid", r.KeptMyID, "environment", p.MyID)
	}
	return p, nil
}

// runHealthcheck is "zoo healthcheck [host:port]" (default
// 127.0.0.1:2181), for container health checks in images without a shell:
// it exits 0 only if the server answers srvr as a serving member. srvr is
// the one four-letter word Apache's default whitelist allows.
func runHealthcheck(args []string, out io.Writer) error {
	addr := "127.0.0.1:2181"
	switch len(args) {
	case 0:
	case 1:
		addr = args[0]
	default:
		return errors.New("usage: zoo healthcheck [host:port]")
	}
	ans, err := ask(addr, "srvr", 5*time.Second)
	if err != nil {
		return err
	}
	return srvrHealthy(ans, out)
}

// srvrHealthy reads a srvr answer: a serving server reports its Mode; one
// without a quorum says it is not serving; a whitelist without srvr says
// so.
func srvrHealthy(ans string, out io.Writer) error {
	for l := range strings.Lines(ans) {
		if mode, ok := strings.CutPrefix(l, "Mode: "); ok {
			_, err := fmt.Fprintf(out, "ok: %s", mode)
			return err
		}
	}
	if ans = strings.TrimSpace(ans); ans == "" {
		ans = "an empty answer"
	}
	return fmt.Errorf("not serving: srvr says %q", ans)
}
