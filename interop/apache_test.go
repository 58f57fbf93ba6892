package interop

import (
	"errors"
	"fmt"
	"testing"

	"github.com/zoohq/zoo/internal/zktest"
)

// The Apache target runs Debian's ZooKeeper 3.8 (apt install zookeeper) in
// standalone mode, one JVM per distinct Options.
func init() { register(Target{Name: "apache", Start: startApache}) }

func startApache(t testing.TB, o Options) (string, func()) {
	srv, err := zktest.Apache{
		TickTimeMs:               o.TickTimeMs,
		MinSessionTimeoutMs:      o.MinSessionTimeoutMs,
		MaxSessionTimeoutMs:      o.MaxSessionTimeoutMs,
		ExtendedTypes:            o.ExtendedTypes,
		SuperDigest:              o.SuperDigest,
		EnforceQuota:             o.EnforceQuota,
		ContainerCheckIntervalMs: o.ContainerCheckIntervalMs,
	}.Start(t.TempDir())
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	onFailure(func() string {
		return fmt.Sprintf("--- last lines of the Apache server log (%+v):\n%s", o, srv.Tail(40))
	})
	return srv.Addr, srv.Stop
}
