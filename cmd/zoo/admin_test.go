package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

// loadServer loads zoo.cfg text from a file and starts a server for it,
// stopped when the test ends.
func loadServer(t *testing.T, cfgText string) (*config.Config, *server.Server) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte(cfgText+"dataDir="+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv, err := server.New(serverConfig(log, cfg))
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, "127.0.0.1:0")
	deadline := time.Now().Add(10 * time.Second)
	for !srv.Source().Serving() {
		if time.Now().After(deadline) {
			t.Fatal("server not serving")
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	return cfg, srv
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	b, err := getBody(url)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return b
}

// getBody is one GET of url: its body, and an error if there is none or
// the status is not 200 OK. A test that polls an endpoint still starting
// calls it rather than httpGet.
func getBody(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// zoo.cfg's admin.* and metricsProvider.* keys start the AdminServer and
// the Prometheus endpoint where they say, with admin.commandURL honoured;
// initial_configuration shows the file.
func TestAdminAndMetricsFromZooCfg(t *testing.T) {
	adminPort, metricsPort := freePort(t), freePort(t)
	cfg, srv := loadServer(t, fmt.Sprintf(`clientPort=%d
admin.serverAddress=127.0.0.1
admin.serverPort=%d
admin.commandURL=/zk
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpHost=127.0.0.1
metricsProvider.httpPort=%d
metricsProvider.exportJvmInfo=false
`, freePort(t), adminPort, metricsPort))
	log := slog.New(slog.DiscardHandler)
	stopAdmin, err := startAdmin(log, cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer stopAdmin()
	stopMetrics, err := startMetrics(log, cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer stopMetrics()
	base := fmt.Sprintf("http://127.0.0.1:%d/zk", adminPort)
	if out := httpGet(t, base+"/icfg"); !strings.Contains(out, `admin.commandURL=/zk`) {
		t.Errorf("initial_configuration: %s", out)
	}
	if out := httpGet(t, base); !strings.Contains(out, `<a href="/zk/ruok">ruok</a>`) {
		t.Errorf("command list: %s", out)
	}
	out := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if !strings.Contains(out, "\nznode_count ") || strings.Contains(out, "go_goroutines") {
		t.Errorf("/metrics (exportJvmInfo=false):\n%.2000s", out)
	}
}

// A standalone server whose AdminServer port is taken does not start, as
// Apache's ZooKeeperServerMain exits; admin.enableServer=false starts none;
// a metrics provider Zoo cannot load is warned about, not fatal.
func TestAdminPortTakenAndDisabled(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	log := slog.New(slog.DiscardHandler)
	cfg, srv := loadServer(t, fmt.Sprintf("clientPort=%d\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n", freePort(t), port))
	if _, err := startAdmin(log, cfg, srv); err == nil || !strings.Contains(err.Error(), "admin.serverPort") {
		t.Errorf("taken port: %v", err)
	}
	cfg, srv = loadServer(t, fmt.Sprintf("clientPort=%d\nadmin.enableServer=false\nmetricsProvider.className=com.example.Nope\n", freePort(t)))
	stop, err := startAdmin(log, cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop, err = startMetrics(log, cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
