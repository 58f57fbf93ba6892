package cli

import (
	"os"
	"path/filepath"
	"testing"

	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest/inproc"
)

// TestSASLJAASClient: zoo cli logs in with the JAAS Client section, as
// zkCli.sh does, where the server requires SASL.
func TestSASLJAASClient(t *testing.T) {
	addr := inproc.Start(t, zooserver.Config{
		SASL:               &zooserver.SASLConfig{Users: map[string]string{"bob": "pw"}},
		EnforceAuthSchemes: []string{"sasl"},
	})
	dir := t.TempDir()
	jaas := filepath.Join(dir, "jaas.conf")
	if err := os.WriteFile(jaas, []byte(`Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="bob" password="pw"; };`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLIENT_JVMFLAGS", "-Djava.security.auth.login.config="+jaas)
	stdout, stderr, status := run(t, "", "-server", addr, "-timeout", "5000", "whoami")
	if want := "Auth scheme: User\nsasl: bob\nip: 127.0.0.1\n"; status != 0 || stdout != want {
		t.Errorf("whoami with JAAS: status %d, stdout %q, stderr %q; want %q", status, stdout, stderr, want)
	}
	wrong := filepath.Join(dir, "wrong.conf")
	if err := os.WriteFile(wrong, []byte(`Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="bob" password="no"; };`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, status := run(t, "", "-server", addr, "-timeout", "5000", "-jaas", wrong, "whoami"); status == 0 {
		t.Error("a wrong password succeeded")
	}
	if _, stderr, status := run(t, "", "-server", addr, "-jaas", filepath.Join(dir, "missing"), "whoami"); status != 2 || stderr == "" {
		t.Errorf("a missing JAAS file: status %d, stderr %q", status, stderr)
	}
}
