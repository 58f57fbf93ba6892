package recipe

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Apache target: Debian's ZooKeeper 3.8 (apt-get install zookeeper),
// the oracle. The same set-up as the zk package's tests.
func init() { targets = append(targets, target{name: "apache", start: startApache}) }

var apacheJars = []string{
	"/usr/share/java/zookeeper.jar",
	"/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-simple.jar",
}

// startApache runs a standalone server in a temp dir. The port is free
// when probed but may be taken before the JVM binds it, so a start that
// fails on the port is retried.
func startApache(t testing.TB) (string, func()) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH: install Debian's zookeeper package (apt-get install zookeeper) to test against Apache")
	}
	for _, jar := range apacheJars {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("%s missing: install Debian's zookeeper package (apt-get install zookeeper) to test against Apache", jar)
		}
	}
	dir, err := os.MkdirTemp("", "recipe-apache-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	var lastErr error
	for attempt := range 3 {
		addr, stop, err := launchApache(java, filepath.Join(dir, fmt.Sprint(attempt)))
		if err == nil {
			return addr, func() { stop(); _ = os.RemoveAll(dir) }
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	_ = os.RemoveAll(dir)
	t.Fatalf("start Apache ZooKeeper: %v", lastErr)
	return "", nil
}

func launchApache(java, dir string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return "", nil, err
	}
	cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
		"admin.enableServer=false\n4lw.commands.whitelist=*\nmaxClientCnxns=0\nextendedTypesEnabled=true\n",
		filepath.Join(dir, "data"), port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return "", nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.forceSync=no", "-Dzookeeper.preAllocSize=1024", "-Dznode.container.checkIntervalMs=100",
		"-cp", strings.Join(apacheJars, ":"), "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { _ = cmd.Process.Kill(); <-exited }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if out, err := fourLetter(addr, "srvr"); err == nil && strings.Contains(out, "Mode: standalone") {
			return addr, stop, nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("java exited during start-up: %s", tail(b, 20))
		case <-time.After(50 * time.Millisecond): // polling the server; it signals nothing
		}
		if time.Now().After(deadline) {
			stop()
			b, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("not serving after 60s: %s", tail(b, 20))
		}
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func fourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}
