// Package zktest is the test harness that several packages' tests share:
// starting Apache ZooKeeper 3.8, the oracle, for tests that run the same
// assertions against it and against Zoo. It is imported by tests only.
package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable means Apache ZooKeeper cannot run here: no java, or the
// Debian package's jars are missing. Tests skip on it.
var ErrUnavailable = errors.New("zktest: Apache ZooKeeper unavailable; install Debian's zookeeper package (apt-get install zookeeper)")

// jars is the class path; zookeeper.jar's manifest pulls in the rest
// (netty, slf4j-api, ...).
var jars = []string{
	"/usr/share/java/zookeeper.jar",
	"/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-simple.jar",
}

// NettyJars are the Netty jars (Debian libnetty-java) that Apache's Netty
// connections need and Debian's zookeeper.jar manifest does not name.
var NettyJars = []string{"/usr/share/java/netty-codec.jar", "/usr/share/java/netty-resolver.jar"}

// startTimeout bounds one JVM start; a cold JVM on a loaded 2-core machine
// takes several seconds.
const startTimeout = 60 * time.Second

// Apache describes an Apache ZooKeeper 3.8 server to start.
type Apache struct {
	TickTimeMs                               int // 0: 2000
	MinSessionTimeoutMs, MaxSessionTimeoutMs int // 0: Apache's defaults
	ExtendedTypes                            bool
	SuperDigest                              string // "super:<digest>"
	EnforceQuota                             bool
	ContainerCheckIntervalMs                 int
	// ReadOnly starts one member of a three-server ensemble whose other
	// members never start, with read-only mode on: it serves read-only
	// sessions. Apache 3.8 needs local sessions for those.
	ReadOnly bool
	// AdminServer starts Apache's AdminServer (Jetty) on a free loopback
	// port: Server.AdminURL. Debian's Apache needs the servlet API
	// (libservlet-api-java) on the class path for it.
	AdminServer bool
	// TLS, if not empty, is zoo.cfg lines of ssl.* settings: the server
	// then also listens on a secureClientPort (Netty), at SecureAddr.
	TLS string
	// JAAS, when set, is written to jaas.conf and named by
	// -Djava.security.auth.login.config (the SASL login).
	JAAS string
	// Extra are more zoo.cfg lines ("key=value").
	Extra []string
	// JVMFlags are more -D flags.
	JVMFlags []string
	// DataDir, if set, is the dataDir to use (an existing one to start
	// from); by default each start gets a new one under its directory.
	DataDir string
	// Props are more Java system properties ("zookeeper.snapCount=20"),
	// passed as -D flags.
	Props []string
}

// servletJar is the servlet API Debian's Jetty build of the AdminServer
// needs and zookeeper.jar's manifest does not name.
const servletJar = "/usr/share/java/servlet-api.jar"

// Server is a running Apache server.
type Server struct {
	Addr string // 127.0.0.1:port
	// AdminURL is the AdminServer's command URL, http://127.0.0.1:port/commands,
	// with Apache.AdminServer; else "".
	AdminURL string
	LogPath  string
	DataDir  string
	cmd      *exec.Cmd
	exited   chan struct{}
	once     sync.Once

	// SecureAddr is the secureClientPort's address when Apache.TLS is set.
	SecureAddr string
}

// Start starts the server with its files under dir and returns once it
// serves. A port found free may be taken before the JVM binds it, so a
// conflict is retried on another port.
func (a Apache) Start(dir string) (*Server, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	need := jars
	if a.AdminServer {
		need = append(slices.Clone(jars), servletJar)
	}
	for _, jar := range need {
		if _, err := os.Stat(jar); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	var lastErr error
	for attempt := range 3 {
		s, err := a.launch(java, filepath.Join(dir, fmt.Sprint(attempt)))
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

func (a Apache) launch(java, dir string) (*Server, error) {
	ports, err := freePorts(9) // client, quorum+election for 3 members, admin, secure client
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if a.DataDir != "" {
		data = a.DataDir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if a.ReadOnly {
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte("1\n"), 0o644); err != nil {
			return nil, err
		}
	}
	if a.JAAS != "" {
		jaas := filepath.Join(dir, "jaas.conf")
		if err := os.WriteFile(jaas, []byte(a.JAAS), 0o644); err != nil {
			return nil, err
		}
		a.JVMFlags = append(slices.Clip(a.JVMFlags), "-Djava.security.auth.login.config="+jaas)
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(a.config(data, ports)), 0o644); err != nil {
		return nil, err
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), LogPath: filepath.Join(dir, "server.log"), DataDir: data, exited: make(chan struct{})}
	cp := jars
	if a.AdminServer {
		s.AdminURL = fmt.Sprintf("http://127.0.0.1:%d/commands", ports[7])
		cp = append(slices.Clone(jars), servletJar)
	}
	if a.TLS != "" {
		s.SecureAddr = fmt.Sprintf("127.0.0.1:%d", ports[8])
		// Debian's zookeeper.jar manifest leaves out the Netty codec
		// that NettyServerCnxnFactory needs.
		cp = append(slices.Clip(cp), NettyJars...)
	}
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	args := append(a.jvmFlags(), "-cp", strings.Join(cp, ":"),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	s.cmd = exec.Command(java, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("zktest: start java: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(a.mode()); err != nil {
		s.Stop()
		return nil, fmt.Errorf("zktest: %v; last lines of %s:\n%s", err, s.LogPath, s.Tail(30))
	}
	return s, nil
}

// config is the zoo.cfg. Keys Apache does not know become "zookeeper."
// system properties, which is how extendedTypesEnabled reaches it.
func (a Apache) config(data string, ports []int) string {
	tick := a.TickTimeMs
	if tick == 0 {
		tick = 2000
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ndataDir=%s\nclientPort=%d\n", tick, data, ports[0])
	b.WriteString("clientPortAddress=127.0.0.1\n4lw.commands.whitelist=*\n")
	if a.AdminServer {
		fmt.Fprintf(&b, "admin.enableServer=true\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n", ports[7])
	} else {
		b.WriteString("admin.enableServer=false\n")
	}
	b.WriteString("maxClientCnxns=0\n") // tests open many sessions from 127.0.0.1
	if a.MinSessionTimeoutMs > 0 {
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", a.MinSessionTimeoutMs)
	}
	if a.MaxSessionTimeoutMs > 0 {
		fmt.Fprintf(&b, "maxSessionTimeout=%d\n", a.MaxSessionTimeoutMs)
	}
	if a.ExtendedTypes {
		b.WriteString("extendedTypesEnabled=true\n")
	}
	if a.TLS != "" {
		fmt.Fprintf(&b, "secureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", ports[8])
		b.WriteString("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n" + a.TLS + "\n")
	}
	if a.ReadOnly {
		b.WriteString("initLimit=5\nsyncLimit=2\nlocalSessionsEnabled=true\n")
		for id := 1; id <= 3; id++ {
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", id, ports[2*id-1], ports[2*id])
		}
	}
	for _, l := range a.Extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// jvmFlags are the settings that are system properties only, plus what
// makes a throwaway server start and write quickly.
func (a Apache) jvmFlags() []string {
	flags := []string{"-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.forceSync=no", "-Dzookeeper.preAllocSize=1024", "-Dzookeeper.jmx.log4j.disable=true"}
	if a.SuperDigest != "" {
		flags = append(flags, "-Dzookeeper.DigestAuthenticationProvider.superDigest="+a.SuperDigest)
	}
	if a.EnforceQuota {
		flags = append(flags, "-Dzookeeper.enforceQuota=true")
	}
	if a.ContainerCheckIntervalMs > 0 {
		flags = append(flags, fmt.Sprintf("-Dznode.container.checkIntervalMs=%d", a.ContainerCheckIntervalMs))
	}
	if a.ReadOnly {
		flags = append(flags, "-Dreadonlymode.enabled=true")
	}
	for _, p := range a.Props {
		flags = append(flags, "-D"+p)
	}
	return append(flags, a.JVMFlags...)
}

func (a Apache) mode() string {
	if a.ReadOnly {
		return "Mode: read-only"
	}
	return "Mode: standalone"
}

// waitReady polls srvr until the server reports its mode: it answers "not
// currently serving requests" while starting, and signals nothing else.
func (s *Server) waitReady(mode string) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := FourLetter(s.Addr, "srvr", time.Second)
		if err == nil && strings.Contains(out, mode) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %v (srvr: %q, %v)", startTimeout, out, err)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("java exited during start-up: %v", s.cmd.ProcessState)
		case <-tick.C:
		}
	}
}

// Stop kills the server and waits for it. It is idempotent.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// Tail returns the last n lines of the server's log, for failure messages.
func (s *Server) Tail(n int) string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}

// FourLetter sends a four-letter word and reads the whole answer.
func FourLetter(addr, word string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// PID is the server's process id, for tests that meter its CPU and
// memory from /proc.
func (s *Server) PID() int { return s.cmd.Process.Pid }
