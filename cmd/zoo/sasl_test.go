package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

func TestSASLServerConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	digest := write("digest.conf", "Server {\n org.apache.zookeeper.server.auth.DigestLoginModule required user_bob=\"pw\";\n};\n")
	krb := write("krb.conf", "Server {\n com.sun.security.auth.module.Krb5LoginModule required\n useKeyTab=true keyTab=\"/k\" principal=\"zk/h@R\";\n};\n")
	cache := write("cache.conf", "Server {\n com.sun.security.auth.module.Krb5LoginModule required\n useTicketCache=true principal=\"zk/h@R\";\n};\n")
	clientOnly := write("client.conf", "Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=\"bob\" password=\"pw\"; };\n")
	broken := write("broken.conf", "Server {\n org.apache.zookeeper.server.auth.DigestLoginModule needed;\n};\n")
	log := slog.New(slog.DiscardHandler)

	run := func(jaas string, edit func(*config.Config)) (*server.Config, error) {
		t.Setenv("SERVER_JVMFLAGS", "-Xmx1g -Djava.security.auth.login.config="+jaas)
		t.Setenv("JVMFLAGS", "")
		c := config.Default()
		if edit != nil {
			edit(c)
		}
		var s server.Config
		return &s, saslServerConfig(log, c, &s)
	}
	s, err := run(digest, func(c *config.Config) { c.Auth.SuperUser = "bob"; c.Auth.SessionRequireClientSASLAuth = true })
	if err != nil || s.SASL == nil || s.SASL.Users["bob"] != "pw" || s.SASL.SuperUser != "bob" || len(s.EnforceAuthSchemes) != 1 {
		t.Errorf("digest: %+v, %v", s, err)
	}
	if _, err := run(krb, nil); !errors.Is(err, auth.ErrJAAS) || !strings.Contains(err.Error(), krb+":2:") {
		t.Errorf("Kerberos Server section: %v, want a refusal at %s:2", err, krb)
	}
	if _, err := run(cache, nil); !errors.Is(err, auth.ErrJAAS) || !strings.Contains(err.Error(), cache+":2:") || !strings.Contains(err.Error(), "useKeyTab") {
		t.Errorf("Kerberos without a keytab: %v, want a refusal at %s:2", err, cache)
	}
	if _, err := run(broken, nil); !errors.Is(err, auth.ErrJAAS) || !strings.Contains(err.Error(), broken+":2:") {
		t.Errorf("broken file: %v, want an error at %s:2", err, broken)
	}
	if s, err := run(clientOnly, nil); err != nil || s.SASL != nil {
		t.Errorf("no Server section: %+v, %v; want SASL off", s.SASL, err)
	}
	if _, err := run(filepath.Join(dir, "missing.conf"), nil); err == nil {
		t.Error("a missing JAAS file was accepted")
	}
}

func TestOpenAudit(t *testing.T) {
	c := config.Default()
	c.DataLogDir = t.TempDir()
	c.Auth.Audit = true
	al, closeAudit, err := openAudit(slog.New(slog.DiscardHandler), c)
	if err != nil || al == nil {
		t.Fatalf("openAudit: %v", err)
	}
	closeAudit()
	data, err := os.ReadFile(filepath.Join(c.DataLogDir, config.DefaultAuditFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "\toperation=serverStart\tresult=success") ||
		!strings.Contains(lines[1], "\toperation=serverStop\tresult=invoked") {
		t.Errorf("audit file:\n%s", data)
	}
}
