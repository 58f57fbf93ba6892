package main

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

const zkCli = "/usr/share/zookeeper/bin/zkCli.sh"

// issuedPorts are the ports freePort handed out in this test binary.
var issuedPorts sync.Map

// freePort returns a loopback port that was free a moment ago and that it
// has not handed out before: the kernel may give a port back again once
// its listener is closed, and two servers of one test were once given the
// same port (a quorum port and a client port).
func freePort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, dup := issuedPorts.LoadOrStore(port, true); !dup {
			return port
		}
	}
}

// startZooBinary builds zoo, starts `zoo server cfg` and stops it (SIGKILL)
// when the test ends. It returns once addr accepts connections.
// memberDirs makes ensemble member id's directory under root and its data
// directory holding myid, and returns both.
func memberDirs(t *testing.T, root string, id int) (dir, data string) {
	t.Helper()
	dir = filepath.Join(root, fmt.Sprint(id))
	data = filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprintf("%d\n", id)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data
}

func startZooBinary(t *testing.T, dir, cfg, addr string) {
	t.Helper()
	runZooBinary(t, buildZoo(t), dir, cfg, addr)
}

// runZooBinary starts `bin server cfg`, logging to dir/zoo.log, and stops
// it when the test ends; it returns once addr accepts connections.
func runZooBinary(t *testing.T, bin, dir, cfg, addr string) {
	t.Helper()
	runZooBinaryEnv(t, bin, dir, cfg, addr)
}

// runZooBinaryEnv is runZooBinary with environment variables (such as
// SERVER_JVMFLAGS) added; it returns a function that kills the server
// early (the cleanup then does nothing more).
func runZooBinaryEnv(t *testing.T, bin, dir, cfg, addr string, env ...string) (kill func()) {
	t.Helper()
	logPath := filepath.Join(dir, "zoo.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "server", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(append(os.Environ(), "SERVER_JVMFLAGS=", "JVMFLAGS="), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(func() {
		kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("zoo server log:\n%s", b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return kill
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("zoo server exited:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("zoo server not listening on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
}

// TestJavaClientOverTLS runs Apache's zkCli.sh 3.8 with its Netty socket
// over TLS (JKS stores made by keytool, a client certificate) against
// `zoo server` configured as an Apache deployment would be:
// secureClientPort beside clientPort, serverCnxnFactory Netty, ssl.* JKS
// stores (a long handshake timeout: a JVM on a loaded machine is slow to
// start TLS). The client's x509 identity is its certificate subject (zkCli
// splits ACLs at commas, so the subject has none).
func TestJavaClientOverTLS(t *testing.T) {
	if _, err := os.Stat(zkCli); err != nil {
		t.Skip("zkCli.sh not installed (Debian zookeeper)")
	}
	for _, jar := range zktest.NettyJars {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("%s not installed (Debian libnetty-java)", jar)
		}
	}
	authtest.Keytool(t)
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	serverJKS := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}}).JKS(t, dir, "server.jks", "serverpw")
	clientJKS := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "java"}}).JKS(t, dir, "client.jks", "clientpw")
	trustJKS := ca.TrustStore(t, dir, "trust.jks", "JKS", "trustpw")

	plain, secure := freePort(t), freePort(t)
	cfg := authtest.WriteFile(t, dir, "zoo.cfg", []byte(fmt.Sprintf(`tickTime=500
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
secureClientPort=%d
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=%s
ssl.keyStore.password=serverpw
ssl.trustStore.location=%s
ssl.trustStore.password=trustpw
ssl.handshakeDetectionTimeoutMillis=30000
`, filepath.Join(dir, "data"), plain, secure, serverJKS, trustJKS)))
	addr := fmt.Sprintf("127.0.0.1:%d", secure)
	startZooBinary(t, dir, cfg, addr)

	// zkCli.sh's class path (Debian's zkEnv.sh) lacks the Netty codec
	// and resolver that the Netty socket needs; a later -cp in
	// CLIENT_JVMFLAGS wins.
	jvmFlags := strings.Join([]string{
		"-cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar:" + strings.Join(zktest.NettyJars, ":"),
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.ssl.keyStore.location=" + clientJKS, "-Dzookeeper.ssl.keyStore.password=clientpw",
		"-Dzookeeper.ssl.trustStore.location=" + trustJKS, "-Dzookeeper.ssl.trustStore.password=trustpw",
	}, " ")
	cli := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, zkCli, append([]string{"-server", addr}, args...)...)
		cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+jvmFlags, "JVMFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zkCli.sh %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cli("create", "/java-tls", "over-tls", "x509:CN=java:cdrwa")
	if out := cli("get", "/java-tls"); !strings.Contains(out, "over-tls") {
		t.Fatalf("get over TLS as the ACL's subject:\n%s", out)
	}
	if out := cli("getAcl", "/java-tls"); !strings.Contains(out, "'x509,'CN=java") {
		t.Fatalf("getAcl:\n%s", out)
	}
}

// TestQuorumTLSEnsemble: three `zoo server` processes configured as an
// Apache ensemble with sslQuorum=true and ssl.quorum.* stores (PKCS12
// key stores, a PEM trust store) replicate over mutual TLS.
func TestQuorumTLSEnsemble(t *testing.T) {
	root := t.TempDir()
	bin := buildZoo(t)
	ca := authtest.NewCA(t, "quorum-ca")
	trust := authtest.WriteFile(t, root, "ca.pem", ca.PEM())
	var servers string
	client := map[int]int{}
	for id := 1; id <= 3; id++ {
		servers += fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", id, freePort(t), freePort(t))
		client[id] = freePort(t)
	}
	for id := 1; id <= 3; id++ {
		dir, data := memberDirs(t, root, id)
		key := authtest.WriteFile(t, dir, "key.p12", ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: fmt.Sprintf("zoo%d", id)}}).PKCS12(t, "pw"))
		cfg := authtest.WriteFile(t, dir, "zoo.cfg", []byte(fmt.Sprintf(`tickTime=200
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
sslQuorum=true
ssl.quorum.keyStore.location=%s
ssl.quorum.keyStore.password=pw
ssl.quorum.trustStore.location=%s
%s`, data, client[id], key, trust, servers)))
		runZooBinary(t, bin, dir, cfg, fmt.Sprintf("127.0.0.1:%d", client[id]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c1, err := zk.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", client[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for {
		_, _, err = c1.Create(ctx, "/over-tls", []byte("replicated"), 0, zk.OpenACLUnsafe())
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // until a leader is elected; polling with a deadline
	}
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for _, id := range []int{2, 3} {
		c, err := zk.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", client[id]))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Sync(ctx, "/over-tls"); err != nil {
			t.Fatal(err)
		}
		data, _, err := c.Get(ctx, "/over-tls")
		c.Close()
		if err != nil || string(data) != "replicated" {
			t.Fatalf("server %d: %q, %v", id, data, err)
		}
	}
	for id := 1; id <= 3; id++ {
		b, _ := os.ReadFile(filepath.Join(root, fmt.Sprint(id), "zoo.log"))
		if !strings.Contains(string(b), "quorum TLS: mutual TLS") {
			t.Errorf("server %d did not start quorum TLS:\n%s", id, b)
		}
	}
}
