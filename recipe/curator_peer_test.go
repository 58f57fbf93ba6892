package recipe

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A curatorPeer is a JVM running Curator 5.4's recipes
// (testdata/CuratorPeer.java) on the same server as the Go test, driven
// line by line over stdin and stdout. Tests that use it skip when Java or
// Debian's Curator jars (libcurator-recipes-java,
// libcurator-framework-java, libcurator-discovery-java) are absent.
type curatorPeer struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // closed when the JVM's stdout ends
	done  chan struct{}
}

const javaDir = "/usr/share/java"

var curatorJars = []string{
	"curator-client.jar", "curator-framework.jar", "curator-recipes.jar", "curator-x-discovery.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-nop.jar", "guava.jar",
	"jackson-core.jar", "jackson-databind.jar", "jackson-annotations.jar",
}

// peerSlots bounds the JVMs running at once: each takes a core to start.
var peerSlots = make(chan struct{}, 2)

var (
	peerOnce    sync.Once
	peerClasses string // directory of the compiled CuratorPeer
	peerCP      string
	peerSkip    string
)

// compilePeer compiles CuratorPeer.java once per package run.
func compilePeer() {
	javac, err := exec.LookPath("javac")
	if err != nil {
		peerSkip = "javac not installed"
		return
	}
	if _, err := exec.LookPath("java"); err != nil {
		peerSkip = "java not installed"
		return
	}
	cp := make([]string, len(curatorJars))
	for i, j := range curatorJars {
		cp[i] = filepath.Join(javaDir, j)
		if _, err := os.Stat(cp[i]); err != nil {
			peerSkip = "Curator jars absent (apt-get install libcurator-recipes-java libcurator-discovery-java): " + err.Error()
			return
		}
	}
	dir, err := os.MkdirTemp("", "curator-peer-")
	if err != nil {
		peerSkip = err.Error()
		return
	}
	atExit = append(atExit, func() { _ = os.RemoveAll(dir) })
	peerCP = strings.Join(cp, string(os.PathListSeparator))
	out, err := exec.Command(javac, "-d", dir, "-cp", peerCP, filepath.Join("testdata", "CuratorPeer.java")).CombinedOutput()
	if err != nil {
		// Java and the jars are there: a failure to compile is a bug.
		peerSkip = "FAIL: javac CuratorPeer.java: " + err.Error() + ": " + string(out)
		return
	}
	peerClasses = dir
}

// newCuratorPeer starts a JVM connected to the test's server and waits
// until its Curator client is connected. It is stopped when the test ends.
func newCuratorPeer(t *testing.T) *curatorPeer {
	t.Helper()
	peerOnce.Do(compilePeer)
	if strings.HasPrefix(peerSkip, "FAIL: ") {
		t.Fatal(peerSkip)
	}
	if peerSkip != "" {
		t.Skip(peerSkip)
	}
	peerSlots <- struct{}{}
	t.Cleanup(func() { <-peerSlots })
	cmd := exec.Command("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", peerClasses+string(os.PathListSeparator)+peerCP,
		"CuratorPeer", serverAddr(t))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &tailWriter{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &curatorPeer{t: t, cmd: cmd, in: in, lines: make(chan string, 64), done: make(chan struct{})}
	go func() { // owned by the peer: ends when the JVM's stdout closes
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(p.stop)
	p.expect("ready")
	return p
}

// send writes one command line.
func (p *curatorPeer) send(cmd string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, cmd+"\n"); err != nil {
		p.t.Fatalf("curator peer: send %q: %v", cmd, err)
	}
}

// expect waits for the next line, which must start with prefix, and
// returns the rest of it.
func (p *curatorPeer) expect(prefix string) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("curator peer exited while waiting for %q: %s", prefix, p.cmd.Stderr)
		}
		if !strings.HasPrefix(l, prefix) {
			p.t.Fatalf("curator peer said %q, want %q...", l, prefix)
		}
		return strings.TrimSpace(strings.TrimPrefix(l, prefix))
	case <-time.After(60 * time.Second):
		p.t.Fatalf("curator peer: no %q within 60s", prefix)
	}
	return ""
}

// nothing checks that the peer has said nothing more for a moment.
func (p *curatorPeer) nothing(d time.Duration) {
	p.t.Helper()
	select {
	case l := <-p.lines:
		p.t.Fatalf("curator peer said %q, want nothing", l)
	case <-time.After(d):
	}
}

func (p *curatorPeer) do(cmd, want string) string {
	p.t.Helper()
	p.send(cmd)
	return p.expect(want)
}

// stop asks the JVM to quit, and kills it if it does not.
func (p *curatorPeer) stop() {
	_, _ = io.WriteString(p.in, "quit\n")
	_ = p.in.Close()
	exited := make(chan struct{})
	go func() {
		for range p.lines { // drain until stdout closes
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-exited
	}
	_ = p.cmd.Wait()
}

// tailWriter keeps the end of the JVM's stderr for failure messages.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if len(w.buf) > 8<<10 {
		w.buf = w.buf[len(w.buf)-8<<10:]
	}
	return len(b), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
