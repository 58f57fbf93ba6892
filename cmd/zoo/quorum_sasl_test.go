package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/zk"
)

// quorumJAAS is a JAAS file as Apache's quorum SASL guide writes it.
func quorumJAAS(password string) string {
	return fmt.Sprintf(`QuorumServer {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_zkquorum="secret";
};
QuorumLearner {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="zkquorum"
       password="%s";
};
`, password)
}

// TestQuorumSASLSettings: Apache's rules for the quorum.auth.* keys and
// the JAAS sections they name, each broken one stopping the server with
// the line at fault.
func TestQuorumSASLSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.conf", quorumJAAS("secret"))
	renamed := write("renamed.conf", strings.NewReplacer("QuorumServer", "QS", "QuorumLearner", "QL").Replace(quorumJAAS("secret")))
	krb := write("krb.conf", "QuorumServer {\n com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\" principal=\"zkquorum/h@R\";\n};\n"+
		"QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required username=\"a\" password=\"b\"; };\n")
	noLearner := write("nolearner.conf", "QuorumServer { org.apache.zookeeper.server.auth.DigestLoginModule required user_a=\"b\"; };\n")
	log := slog.New(slog.DiscardHandler)
	run := func(jaas, cfgText string) error {
		t.Setenv("SERVER_JVMFLAGS", "-Djava.security.auth.login.config="+jaas)
		t.Setenv("JVMFLAGS", "")
		c, err := config.Parse("zoo.cfg", []byte("dataDir=/d\n"+cfgText))
		if err != nil {
			t.Fatalf("%s: %v", cfgText, err)
		}
		a, err := quorumSASL(log, c)
		if err == nil && strings.Contains(cfgText, "enableSasl=true") && a == nil {
			t.Fatalf("%s: no quorum SASL", cfgText)
		}
		return err
	}
	for _, ok := range []struct{ jaas, cfg string }{
		{good, "quorum.auth.enableSasl=true\n"},
		{good, "quorum.auth.enableSasl=true\nquorum.auth.learnerRequireSasl=true\nquorum.auth.serverRequireSasl=true\n"},
		{renamed, "quorum.auth.enableSasl=true\nquorum.auth.learner.saslLoginContext=QL\nquorum.auth.server.saslLoginContext=QS\n"},
		{"", "quorum.auth.enableSasl=false\n"},
	} {
		if err := run(ok.jaas, ok.cfg); err != nil {
			t.Errorf("%q: %v", ok.cfg, err)
		}
	}
	for _, bad := range []struct {
		jaas, cfg string
		is        error
		where     string
	}{
		{good, "quorum.auth.learnerRequireSasl=true\n", config.ErrConflict, "zoo.cfg:2: quorum.auth.learnerRequireSasl"},
		{good, "quorum.auth.enableSasl=true\nquorum.auth.serverRequireSasl=true\n", config.ErrConflict, "zoo.cfg:3: quorum.auth.serverRequireSasl"},
		{good, "quorum.auth.enableSasl=yes\n", config.ErrInvalid, "zoo.cfg:2: quorum.auth.enableSasl"},
		{"", "quorum.auth.enableSasl=true\n", config.ErrMissing, "zoo.cfg:2: quorum.auth.enableSasl"},
		{renamed, "quorum.auth.enableSasl=true\n", auth.ErrJAAS, "no QuorumServer section"},
		{krb, "quorum.auth.enableSasl=true\n", config.ErrRefused, krb + ":2:"},
		{noLearner, "quorum.auth.enableSasl=true\n", auth.ErrJAAS, "no QuorumLearner section"},
	} {
		err := run(bad.jaas, bad.cfg)
		if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), bad.where) {
			t.Errorf("%q: %v, want %v at %q", bad.cfg, err, bad.is, bad.where)
		}
	}
}

// TestQuorumSASLEnsemble: three `zoo server` processes configured as an
// Apache ensemble with quorum SASL required (DIGEST-MD5, the JAAS file
// in SERVER_JVMFLAGS). Server 3 starts with a wrong password: it is
// refused, both sides log it, and servers 1 and 2 serve as a quorum.
// Restarted with the right password it joins and catches up.
func TestQuorumSASLEnsemble(t *testing.T) {
	root := t.TempDir()
	bin := buildZoo(t)
	var servers string
	client := map[int]int{}
	for id := 1; id <= 3; id++ {
		servers += fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", id, freePort(t), freePort(t))
		client[id] = freePort(t)
	}
	start := func(id int, password string) func() {
		dir, data := memberDirs(t, root, id)
		jaas := filepath.Join(dir, "jaas.conf")
		if err := os.WriteFile(jaas, []byte(quorumJAAS(password)), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`tickTime=200
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
quorum.auth.enableSasl=true
quorum.auth.learnerRequireSasl=true
quorum.auth.serverRequireSasl=true
quorum.auth.learner.saslLoginContext=QuorumLearner
quorum.auth.server.saslLoginContext=QuorumServer
%s`, data, client[id], servers)), 0o644); err != nil {
			t.Fatal(err)
		}
		return runZooBinaryEnv(t, bin, dir, cfg, fmt.Sprintf("127.0.0.1:%d", client[id]),
			"SERVER_JVMFLAGS=-Djava.security.auth.login.config="+jaas)
	}
	start(1, "secret")
	start(2, "secret")
	kill3 := start(3, "wrong")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c1, err := zk.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", client[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for {
		_, _, err = c1.Create(ctx, "/sasl-quorum", []byte("v"), 0, zk.OpenACLUnsafe())
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // until a leader is elected; polling with a deadline
	}
	if err != nil {
		t.Fatalf("create with servers 1 and 2: %v", err)
	}
	logOf := func(id int) string {
		b, _ := os.ReadFile(filepath.Join(root, fmt.Sprint(id), "zoo.log"))
		return string(b)
	}
	waitLog := func(id int, want string) {
		t.Helper()
		for !strings.Contains(logOf(id), want) {
			if ctx.Err() != nil {
				t.Fatalf("server %d's log lacks %q:\n%s", id, want, logOf(id))
			}
			time.Sleep(50 * time.Millisecond) // polling with a deadline
		}
	}
	waitLog(3, "refused our credentials")
	waitLog(1, "quorum SASL authentication failed; refusing the peer")
	waitLog(2, "quorum SASL authentication failed; refusing the peer")
	authenticated3 := func(id int) bool {
		for _, line := range strings.Split(logOf(id), "\n") {
			if strings.Contains(line, "quorum peer authenticated") && strings.Contains(line, " from=3 ") {
				return true
			}
		}
		return false
	}
	if authenticated3(1) || authenticated3(2) {
		t.Fatal("server 3 authenticated with a wrong password")
	}
	// Servers 1 and 2 keep serving.
	c2, err := zk.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", client[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, _, err := c2.Create(ctx, "/still-serving", nil, 0, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}

	kill3()
	start(3, "secret")
	c3, err := zk.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", client[3]))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	for {
		err = c3.Sync(ctx, "/still-serving")
		if err == nil {
			var data []byte
			data, _, err = c3.Get(ctx, "/sasl-quorum")
			if err == nil && string(data) != "v" {
				t.Fatalf("server 3 read %q", data)
			}
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // until server 3 has joined; polling with a deadline
	}
	if err != nil {
		t.Fatalf("server 3 with the right password: %v", err)
	}
	if !authenticated3(1) || !authenticated3(2) {
		t.Fatal("server 3 joined without authenticating to 1 and 2")
	}
}
