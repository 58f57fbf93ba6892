package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/config"
)

// TestServerRefusesUnprovidedSecurity: `zoo server` stops before serving
// when zoo.cfg or a -D flag asks for security Zoo does not provide, naming
// every offending setting and where it was set.
func TestServerRefusesUnprovidedSecurity(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zoo.cfg")
	data := "dataDir=" + filepath.Join(dir, "data") + "\nclientPort=2181\nquorum.auth.kerberos.servicePrincipal=zkquorum/localhost\n"
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVER_JVMFLAGS", "-Xmx64m -Dzookeeper.sasl.serverconfig=OtherServer")
	t.Setenv("JVMFLAGS", "")
	err := runServer([]string{"-log-level", "error", cfg})
	if !errors.Is(err, config.ErrRefused) {
		t.Fatalf("got %v, want a refusal", err)
	}
	for _, want := range []string{cfg + ":3: quorum.auth.kerberos.servicePrincipal: ", "$SERVER_JVMFLAGS (word 2): -Dzookeeper.sasl.serverconfig: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from:\n%v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("dataDir created before refusing: %v", err)
	}
}

// TestServerTLSSettingErrors: bad ssl.* values and unreadable stores stop
// the server with the line of the setting at fault.
func TestServerTLSSettingErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zoo.cfg")
	data := "dataDir=" + filepath.Join(dir, "data") + "\nclientPort=0\nsecureClientPort=1\n" +
		"ssl.keyStore.location=" + filepath.Join(dir, "missing.p12") + "\nssl.clientAuth=maybe\nssl.ciphersuites=TLS_NOT_A_SUITE\n"
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVER_JVMFLAGS", "")
	t.Setenv("JVMFLAGS", "")
	err := runServer([]string{"-log-level", "error", cfg})
	if err == nil {
		t.Fatal("the server started")
	}
	for _, want := range []string{cfg + ":5: ssl.clientAuth: ", cfg + ":6: ssl.ciphersuites: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from:\n%v", want, err)
		}
	}
	data = strings.Replace(data, "ssl.clientAuth=maybe\nssl.ciphersuites=TLS_NOT_A_SUITE\n", "", 1)
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runServer([]string{"-log-level", "error", cfg}); err == nil || !strings.Contains(err.Error(), cfg+":4: ssl.keyStore.location: ") {
		t.Errorf("a missing key store: %v", err)
	}
}
