package main

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/config"
)

// The zoo.cfg and myid written from the environment load as the server
// loads them; a second start keeps them and says which variables it
// ignored.
func TestPrepareFromEnvWritesWhatTheServerLoads(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{
		"ZOO_CONF_DIR":  filepath.Join(dir, "conf"),
		"ZOO_DATA_DIR":  filepath.Join(dir, "data"),
		"ZOO_MY_ID":     "2",
		"ZOO_SERVERS":   "server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888;2181",
		"ZOO_CFG_EXTRA": "snapCount=5000",
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	p, err := prepareFromEnv(log, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p.ConfPath)
	if err != nil {
		t.Fatalf("config.Load of the generated zoo.cfg: %v", err)
	}
	if cfg.MyID != 2 || len(cfg.Servers) != 3 || !cfg.Distributed() || cfg.TickTime != 2000 ||
		cfg.ClientPort != 2181 || cfg.SnapCount != 5000 || cfg.DataLogDir != "/datalog" {
		t.Errorf("loaded %+v", cfg)
	}
	if !strings.Contains(logs.String(), "wrote zoo.cfg") || !strings.Contains(logs.String(), "wrote myid") {
		t.Errorf("log does not say what was written:\n%s", logs.String())
	}

	logs.Reset()
	vars["ZOO_TICK_TIME"] = "1000"
	if _, err := prepareFromEnv(log, func(k string) string { return vars[k] }); err != nil {
		t.Fatal(err)
	}
	if again, err := config.Load(p.ConfPath); err != nil || again.TickTime != 2000 {
		t.Errorf("second start changed zoo.cfg: tickTime %d, err %v", again.TickTime, err)
	}
	if !strings.Contains(logs.String(), "ZOO_TICK_TIME") {
		t.Errorf("second start does not name the ignored variables:\n%s", logs.String())
	}
}

func TestSrvrHealthy(t *testing.T) {
	tests := []struct {
		answer string
		ok     bool
	}{
		{"Zookeeper version: 3.9.2-zoo-0.1.0, built on 2026-11-25 18:00 UTC\nLatency min/avg/max: 0/0.0/0\n" +
			"Received: 1\nSent: 0\nConnections: 1\nOutstanding: 0\nZxid: 0x5\nMode: standalone\nNode count: 5\n", true},
		{"Zookeeper version: 3.8.4\nMode: follower\n", true},
		{"This ZooKeeper instance is not currently serving requests\n", false},
		{"srvr is not executed because it is not in the whitelist.\n", false},
		{"", false},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := srvrHealthy(tt.answer, &out)
		if (err == nil) != tt.ok {
			t.Errorf("srvrHealthy(%q) = %v, want ok=%v", tt.answer, err, tt.ok)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	serving := fourLetterServer(t, map[string]string{"srvr": "Zookeeper version: 3.9.2\nMode: leader\n"})
	var out bytes.Buffer
	if err := runHealthcheck([]string{serving}, &out); err != nil || out.String() != "ok: leader\n" {
		t.Errorf("serving server: %v, %q", err, out.String())
	}
	idle := fourLetterServer(t, map[string]string{"srvr": "This ZooKeeper instance is not currently serving requests\n"})
	if err := runHealthcheck([]string{idle}, &out); err == nil {
		t.Error("a server without a quorum is healthy")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if err := runHealthcheck([]string{closed}, &out); err == nil {
		t.Error("nothing listening is healthy")
	}
	if err := runHealthcheck([]string{"a", "b"}, &out); err == nil {
		t.Error("two addresses accepted")
	}
}

// buildZoo builds cmd/zoo into a temporary directory.
func buildZoo(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "zoo")
	build := exec.Command("go", append(append([]string{"build"}, args...), "-o", bin, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDockerEntrypointServes runs the container's command as the image
// does, configured only by the environment, and waits for the health
// check to pass.
func TestDockerEntrypointServes(t *testing.T) {
	bin := buildZoo(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)

	cmd := exec.Command(bin, "docker-entrypoint")
	cmd.Env = append(os.Environ(),
		"ZOO_CONF_DIR="+filepath.Join(dir, "conf"),
		"ZOO_DATA_DIR="+filepath.Join(dir, "data"),
		"ZOO_DATA_LOG_DIR="+filepath.Join(dir, "datalog"),
		"ZOO_SERVERS=server.1=127.0.0.1:2888:3888;"+addr,
		"ZOO_ADMINSERVER_ENABLED=false", // no fixed port 8080 in a test
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Error("server did not stop on SIGTERM")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", stderr.String())
		}
	}()

	deadline := time.Now().Add(20 * time.Second)
	for {
		var out bytes.Buffer
		err := runHealthcheck([]string{addr}, &out)
		if err == nil {
			if !strings.HasPrefix(out.String(), "ok: standalone") {
				t.Errorf("healthcheck: %q", out.String())
			}
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("server exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy after 20s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "datalog", "log")); err != nil {
		t.Errorf("the log is not in ZOO_DATA_LOG_DIR: %v", err)
	}
	readMyID, err := os.ReadFile(filepath.Join(dir, "data", "myid"))
	if err != nil || string(readMyID) != "1\n" {
		t.Errorf("myid = %q, %v", readMyID, err)
	}
}
