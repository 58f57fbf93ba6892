package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Apache target runs Debian's ZooKeeper 3.8 (apt install zookeeper) in
// standalone mode, one JVM per distinct Options.
func init() { register(Target{Name: "apache", Start: startApache}) }

// apacheJars is the class path; zookeeper.jar's manifest pulls in the rest
// (netty, slf4j-api, jute, ...).
var apacheJars = []string{
	"/usr/share/java/zookeeper.jar",
	"/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-simple.jar",
}

// apacheStartTimeout bounds one JVM start; a cold JVM on a loaded 2-core
// machine takes several seconds.
const apacheStartTimeout = 60 * time.Second

func startApache(t testing.TB, o Options) (string, func()) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH; install Debian's zookeeper package (apt-get install zookeeper) to run the oracle")
	}
	for _, jar := range apacheJars {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("%s missing (%v); install Debian's zookeeper package (apt-get install zookeeper) to run the oracle", jar, err)
		}
	}
	dir := t.TempDir()
	// The port is free when probed but may be taken before the JVM binds
	// it; a few attempts make that race harmless.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		srv, err := launchApache(java, filepath.Join(dir, fmt.Sprint(attempt)), port, o)
		if err == nil {
			onFailure(func() string {
				return fmt.Sprintf("--- last lines of the Apache server log (%+v):\n%s", o, tail(srv.logPath, 40))
			})
			return srv.addr, srv.stop
		}
		lastErr = err
		if !errors.Is(err, errPortInUse) {
			break
		}
	}
	t.Fatalf("%v", lastErr)
	return "", nil
}

var errPortInUse = errors.New("port already in use")

type apacheServer struct {
	addr     string
	cmd      *exec.Cmd
	exited   chan struct{}
	logPath  string
	stopOnce sync.Once
}

// launchApache writes zoo.cfg under dir, starts the JVM and waits until it
// serves requests.
func launchApache(java, dir string, port int, o Options) (*apacheServer, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(apacheConfig(filepath.Join(dir, "data"), port, o)), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor

	args := append(apacheJVMFlags(o),
		"-cp", strings.Join(apacheJars, ":"),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start java: %w", err)
	}
	s := &apacheServer{
		addr:    fmt.Sprintf("127.0.0.1:%d", port),
		cmd:     cmd,
		exited:  make(chan struct{}),
		logPath: logPath,
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(apacheStartTimeout); err != nil {
		s.stop()
		log := tail(logPath, 30)
		if strings.Contains(log, "Address already in use") {
			return nil, fmt.Errorf("%w: %v", errPortInUse, err)
		}
		return nil, fmt.Errorf("%v; last lines of %s:\n%s", err, logPath, log)
	}
	return s, nil
}

// apacheConfig maps Options to zoo.cfg. Keys Apache does not know are
// turned into "zookeeper."-prefixed system properties by QuorumPeerConfig,
// which is how extendedTypesEnabled reaches the server.
func apacheConfig(dataDir string, port int, o Options) string {
	tick := o.TickTimeMs
	if tick == 0 {
		tick = 2000
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\n", tick)
	fmt.Fprintf(&b, "dataDir=%s\n", dataDir)
	fmt.Fprintf(&b, "clientPort=%d\n", port)
	b.WriteString("clientPortAddress=127.0.0.1\n")
	b.WriteString("admin.enableServer=false\n")
	b.WriteString("4lw.commands.whitelist=*\n")
	b.WriteString("maxClientCnxns=0\n") // tests open many sessions from 127.0.0.1
	if o.MinSessionTimeoutMs > 0 {
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", o.MinSessionTimeoutMs)
	}
	if o.MaxSessionTimeoutMs > 0 {
		fmt.Fprintf(&b, "maxSessionTimeout=%d\n", o.MaxSessionTimeoutMs)
	}
	if o.ExtendedTypes {
		b.WriteString("extendedTypesEnabled=true\n")
	}
	return b.String()
}

// apacheJVMFlags maps the Options that are system properties only, plus
// settings that make a throwaway test server start and write quickly.
func apacheJVMFlags(o Options) []string {
	flags := []string{
		"-Xmx512m",
		"-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1", // faster start-up; the suite is short
		"-Dzookeeper.forceSync=no",
		"-Dzookeeper.preAllocSize=1024", // KiB
		"-Dzookeeper.jmx.log4j.disable=true",
	}
	if o.SuperDigest != "" {
		flags = append(flags, "-Dzookeeper.DigestAuthenticationProvider.superDigest="+o.SuperDigest)
	}
	if o.EnforceQuota {
		flags = append(flags, "-Dzookeeper.enforceQuota=true")
	}
	if o.ContainerCheckIntervalMs > 0 {
		flags = append(flags, fmt.Sprintf("-Dznode.container.checkIntervalMs=%d", o.ContainerCheckIntervalMs))
	}
	return flags
}

// waitReady polls the four-letter word srvr until the server reports a
// mode (it answers "not currently serving requests" while starting).
func (s *apacheServer) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := fourLetter(s.addr, "srvr", time.Second)
		if err == nil && strings.Contains(out, "Mode: standalone") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v (srvr: %q, %v)", timeout, out, err)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("java exited during start-up: %v", s.cmd.ProcessState)
		case <-tick.C:
		}
	}
}

func (s *apacheServer) stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// fourLetter sends a four-letter word and reads the whole answer.
func fourLetter(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", err
	}
	out, err := io.ReadAll(conn)
	return string(out), err
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

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
