package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest/inproc"
)

// startZoo runs an in-process Zoo server on a free port for the test.
func startZoo(t testing.TB) string {
	t.Helper()
	return inproc.Start(t, zooserver.Config{
		TickTime:        500 * time.Millisecond,
		ExtendedTypes:   true,
		ContainerCheck:  100 * time.Millisecond,
		FourLetterWords: []string{"*"},
	})
}

// run runs Main with args and script as stdin and returns what it wrote.
func run(t testing.TB, script string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errw bytes.Buffer
	status = Main(args, strings.NewReader(script), &out, &errw)
	return out.String(), errw.String(), status
}
