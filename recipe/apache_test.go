package recipe

import (
	"errors"
	"os"
	"testing"

	"github.com/zoohq/zoo/internal/zktest"
)

// The Apache target: Debian's ZooKeeper 3.8 (apt-get install zookeeper),
// the oracle. The same set-up as the zk package's tests.
func init() { targets = append(targets, target{name: "apache", start: startApache}) }

// startApache runs a standalone server in a temp dir.
func startApache(t testing.TB) (string, func()) {
	dir, err := os.MkdirTemp("", "recipe-apache-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	srv, err := zktest.Apache{TickTimeMs: 500, ExtendedTypes: true, ContainerCheckIntervalMs: 100}.Start(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		if errors.Is(err, zktest.ErrUnavailable) {
			t.Skip(err)
		}
		t.Fatalf("start Apache ZooKeeper: %v", err)
	}
	return srv.Addr, func() {
		srv.Stop()
		_ = os.RemoveAll(dir)
	}
}
