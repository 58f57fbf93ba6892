// Package deploy holds Zoo's deployment files: the compose file, the
// Kubernetes manifests and the systemd unit (the Dockerfile is at the
// repository root). There is no Docker or Kubernetes where the tests run,
// so these tests check what can be checked without them: the files parse,
// their parts refer to each other consistently, and the environment they
// give the container is one docker-entrypoint accepts. systemd-analyze
// verifies the unit when it is installed.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/zoohq/zoo/internal/dockerenv"
)

// obj is a decoded YAML mapping.
type obj = map[string]any

// get walks a path of keys and list indexes through decoded YAML.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(obj)
			if !ok {
				t.Fatalf("%v: not a mapping at %q", path, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

func str(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, ok := get(t, v, path...).(string)
	if !ok {
		t.Fatalf("%v: not a string: %#v", path, get(t, v, path...))
	}
	return s
}

// decodeAll reads every document of a YAML stream.
func decodeAll(t *testing.T, path string) []obj {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []obj
	for {
		var d obj
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
}

// envOf turns a container's env list into a lookup function.
func envOf(t *testing.T, list any) map[string]string {
	t.Helper()
	out := map[string]string{}
	items, _ := list.([]any)
	for _, it := range items {
		out[str(t, it, "name")] = str(t, it, "value")
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	docs := decodeAll(t, filepath.Join("kubernetes", "zoo.yaml"))
	byKind := map[string][]obj{}
	for _, d := range docs {
		byKind[str(t, d, "kind")] = append(byKind[str(t, d, "kind")], d)
		if str(t, d, "apiVersion") == "" || str(t, d, "metadata", "name") == "" {
			t.Errorf("document without apiVersion or name: %v", d)
		}
	}
	if len(byKind["StatefulSet"]) != 1 || len(byKind["Service"]) != 2 || len(byKind["PodDisruptionBudget"]) != 1 {
		t.Fatalf("want one StatefulSet, two Services, one PodDisruptionBudget; have %v", byKind)
	}
	sts := byKind["StatefulSet"][0]
	labels := get(t, sts, "spec", "template", "metadata", "labels").(obj)
	matches := func(selector any) bool {
		sel, ok := selector.(obj)
		if !ok || len(sel) == 0 {
			return false
		}
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	if !matches(get(t, sts, "spec", "selector", "matchLabels")) {
		t.Error("the StatefulSet's selector does not match its pod labels")
	}
	if !matches(get(t, byKind["PodDisruptionBudget"][0], "spec", "selector", "matchLabels")) {
		t.Error("the PodDisruptionBudget's selector does not match the pods")
	}
	if get(t, byKind["PodDisruptionBudget"][0], "spec", "maxUnavailable") != 1 {
		t.Error("the PodDisruptionBudget lets more than one of three members go")
	}

	// The headless Service the StatefulSet names gives every member its
	// DNS name before it is ready (members are ready only with a quorum).
	headless := str(t, sts, "spec", "serviceName")
	found := false
	for _, svc := range byKind["Service"] {
		if !matches(get(t, svc, "spec", "selector")) {
			t.Errorf("Service %s does not select the pods", str(t, svc, "metadata", "name"))
		}
		if str(t, svc, "metadata", "name") != headless {
			continue
		}
		found = true
		if get(t, svc, "spec", "clusterIP") != "None" || get(t, svc, "spec", "publishNotReadyAddresses") != true {
			t.Errorf("Service %s: want clusterIP None and publishNotReadyAddresses", headless)
		}
	}
	if !found {
		t.Fatalf("no Service named %q (the StatefulSet's serviceName)", headless)
	}

	c := get(t, sts, "spec", "template", "spec", "containers", 0)
	ports := map[string]int{}
	for _, p := range get(t, c, "ports").([]any) {
		ports[str(t, p, "name")] = get(t, p, "containerPort").(int)
	}
	for name, want := range map[string]int{"client": 2181, "quorum": 2888, "election": 3888, "admin": 8080, "metrics": 7000} {
		if ports[name] != want {
			t.Errorf("container port %s = %d, want %d", name, ports[name], want)
		}
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if p := str(t, c, probe, "httpGet", "path"); p != "/commands/ruok" {
			t.Errorf("%s path %q, want the AdminServer's /commands/ruok", probe, p)
		}
		if port := get(t, c, probe, "httpGet", "port"); port != "admin" && port != 8080 {
			t.Errorf("%s port %v, want the AdminServer's", probe, port)
		}
	}
	mounts := map[string]string{}
	for _, m := range get(t, c, "volumeMounts").([]any) {
		mounts[str(t, m, "mountPath")] = str(t, m, "name")
	}
	claim := str(t, sts, "spec", "volumeClaimTemplates", 0, "metadata", "name")

	// Every member's environment is one docker-entrypoint accepts, gives
	// it its own id, and keeps the log and snapshots on the claim.
	env := envOf(t, get(t, c, "env"))
	replicas := get(t, sts, "spec", "replicas").(int)
	seen := map[int64]bool{}
	for i := range replicas {
		host := fmt.Sprintf("%s-%d", str(t, sts, "metadata", "name"), i)
		p, err := dockerenv.Build(func(k string) string { return env[k] }, host, false)
		if err != nil {
			t.Fatalf("pod %s: docker-entrypoint refuses its environment: %v", host, err)
		}
		if seen[p.MyID] {
			t.Errorf("pod %s: myid %d is taken", host, p.MyID)
		}
		seen[p.MyID] = true
		if !strings.Contains(p.Config, fmt.Sprintf("server.%d=%s.%s:", p.MyID, host, headless)) {
			t.Errorf("pod %s (myid %d) is not server.%d in ZOO_SERVERS:\n%s", host, p.MyID, p.MyID, p.Config)
		}
		for _, dir := range []string{"dataDir", "dataLogDir"} {
			d := configValue(p.Config, dir)
			if mounts[d] != claim {
				t.Errorf("%s %s is not on the volume claim %q (mounts %v)", dir, d, claim, mounts)
			}
		}
		if mounts[filepath.Dir(p.ConfPath)] == "" {
			t.Errorf("zoo.cfg's directory %s is not a volume, and the root file system is read-only", filepath.Dir(p.ConfPath))
		}
	}
	if n := strings.Count(env["ZOO_SERVERS"], "server."); n != replicas {
		t.Errorf("ZOO_SERVERS lists %d servers for %d replicas", n, replicas)
	}
}

// configValue returns key's value in a generated zoo.cfg.
func configValue(cfg, key string) string {
	for l := range strings.Lines(cfg) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+"="); ok {
			return v
		}
	}
	return ""
}

func TestComposeFile(t *testing.T) {
	docs := decodeAll(t, "compose.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
	services := get(t, docs[0], "services").(obj)
	if len(services) != 3 {
		t.Fatalf("%d services, want 3", len(services))
	}
	ids := map[int64]string{}
	hostPorts := map[string]string{}
	for name, svc := range services {
		if str(t, svc, "hostname") != name {
			t.Errorf("%s: hostname %q", name, str(t, svc, "hostname"))
		}
		env := map[string]string{}
		for k, v := range get(t, svc, "environment").(obj) {
			env[k] = fmt.Sprint(v)
		}
		p, err := dockerenv.Build(func(k string) string { return env[k] }, name, false)
		if err != nil {
			t.Fatalf("%s: docker-entrypoint refuses its environment: %v", name, err)
		}
		if other, dup := ids[p.MyID]; dup {
			t.Errorf("%s and %s both have myid %d", name, other, p.MyID)
		}
		ids[p.MyID] = name
		if !strings.Contains(p.Config, fmt.Sprintf("server.%d=%s:", p.MyID, name)) {
			t.Errorf("%s (myid %d) is not server.%d:\n%s", name, p.MyID, p.MyID, p.Config)
		}
		vols := map[string]bool{}
		for _, v := range get(t, svc, "volumes").([]any) {
			_, dir, _ := strings.Cut(v.(string), ":")
			vols[dir] = true
		}
		for _, dir := range []string{configValue(p.Config, "dataDir"), configValue(p.Config, "dataLogDir")} {
			if !vols[dir] {
				t.Errorf("%s: %s is not on a volume", name, dir)
			}
		}
		for _, port := range get(t, svc, "ports").([]any) {
			host, _, _ := strings.Cut(port.(string), ":")
			if other, dup := hostPorts[host]; dup {
				t.Errorf("host port %s used by %s and %s", host, name, other)
			}
			hostPorts[host] = name
		}
	}
}

// dockerfile reads the Dockerfile's instructions, joining continued lines.
func dockerfile(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur += s + " "
			continue
		}
		cur += l
		op, args, _ := strings.Cut(cur, " ")
		out = append(out, [2]string{strings.ToUpper(op), strings.TrimSpace(args)})
		cur = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDockerfile(t *testing.T) {
	ins := dockerfile(t)
	all := func(op string) []string {
		var out []string
		for _, i := range ins {
			if i[0] == op {
				out = append(out, i[1])
			}
		}
		return out
	}
	last := func(op string) string {
		a := all(op)
		if len(a) == 0 {
			t.Fatalf("no %s", op)
		}
		return a[len(a)-1]
	}
	if from := all("FROM"); len(from) < 2 {
		t.Errorf("not a multi-stage build: FROM %v", from)
	}
	// The build stage's Go is the one go.mod asks for.
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if goVer == nil || !strings.HasPrefix(all("FROM")[0], "golang:"+string(goVer[1])) {
		t.Errorf("build stage %q does not use go.mod's Go %s", all("FROM")[0], goVer[1])
	}
	if !slices.ContainsFunc(all("RUN"), func(r string) bool { return strings.Contains(r, "CGO_ENABLED=0") }) {
		t.Error("the binary is not built static (CGO_ENABLED=0)")
	}
	if u := last("USER"); u == "" || u == "root" || strings.HasPrefix(u, "0") {
		t.Errorf("runs as %q", u)
	}
	for _, p := range []string{"2181", "2888", "3888", "8080", "7000"} {
		if !slices.Contains(strings.Fields(last("EXPOSE")), p) {
			t.Errorf("EXPOSE %q lacks %s", last("EXPOSE"), p)
		}
	}
	if !strings.Contains(last("VOLUME"), `"/data"`) {
		t.Errorf("VOLUME %s lacks /data", last("VOLUME"))
	}
	if h := last("HEALTHCHECK"); !strings.Contains(h, `"healthcheck"`) {
		t.Errorf("HEALTHCHECK %q does not run zoo healthcheck", h)
	}
	if e, c := last("ENTRYPOINT"), last("CMD"); !strings.Contains(e+c, `"docker-entrypoint"`) {
		t.Errorf("ENTRYPOINT %s CMD %s does not start docker-entrypoint", e, c)
	}
	// The ENV defaults say what docker-entrypoint does without them.
	p, err := dockerenv.Build(func(string) string { return "" }, "", false)
	if err != nil {
		t.Fatal(err)
	}
	env := last("ENV")
	for _, want := range []string{
		"ZOO_CONF_DIR=" + filepath.Dir(p.ConfPath), "ZOO_DATA_DIR=" + p.DataDir,
		"ZOO_DATA_LOG_DIR=" + configValue(p.Config, "dataLogDir"),
	} {
		if !strings.Contains(env, want) {
			t.Errorf("ENV %q lacks %s", env, want)
		}
	}
}

// TestSystemdUnit runs systemd-analyze verify on the unit, with ExecStart
// pointed at an executable that exists here; any complaint fails.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	unit, err := os.ReadFile(filepath.Join("systemd", "zoo.service"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("ExecStart=/usr/local/bin/zoo server /etc/zoo/zoo.cfg")) {
		t.Fatal("ExecStart is not /usr/local/bin/zoo server /etc/zoo/zoo.cfg")
	}
	path := filepath.Join(t.TempDir(), "zoo.service")
	if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/zoo"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
