package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zoohq/zoo/zk"
)

// chromiumPath is Debian's chromium; the browser tests skip without it.
const chromiumPath = "/usr/bin/chromium"

// artifactDir is where screenshots go: $ZOO_TEST_ARTIFACTS, or a
// directory of the test's own.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("ZOO_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// pageErrors collects what the page reports as wrong: console.error and
// console.warn calls, uncaught exceptions, and the browser's own warning
// and error entries (a resource that failed to load, a CSP violation).
type pageErrors struct {
	mu   sync.Mutex
	msgs []string
}

func (p *pageErrors) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.msgs
	p.msgs = nil
	return out
}

// collect reads the page's console until ctx ends.
func (p *pageErrors) collect(ctx context.Context) {
	for m, err := range chromedp.Console(ctx) {
		if err != nil {
			return
		}
		switch m.Type {
		case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
			p.mu.Lock()
			p.msgs = append(p.msgs, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
			p.mu.Unlock()
		}
	}
}

// newBrowser starts headless Chromium for the test and collects the
// page's errors.
func newBrowser(t *testing.T) (context.Context, *pageErrors) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s (Debian chromium): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	// The first run starts the browser, which lives as long as ctx: no
	// timeout on it, only on what follows.
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting chromium: %v", err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	errs := &pageErrors{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		errs.collect(tctx)
	}()
	t.Cleanup(func() {
		cancelT()
		<-done
		cancelCtx()
		cancelAlloc()
	})
	return tctx, errs
}

// screenshot writes a PNG of the viewport at w×h.
func screenshot(t *testing.T, ctx context.Context, dir, name string, w, h int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h)); err != nil {
		t.Fatal(err)
	}
	// Let the page lay out (and the charts redraw) at the new size.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`new Promise((ok) => requestAnimationFrame(() => { window.dispatchEvent(new Event("resize")); requestAnimationFrame(() => ok(true)); }))`,
		chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// waitText waits until the text of the element sel contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		expr := fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "").includes(%q)`, sel, want)
		pctx, cancel := context.WithTimeout(ctx, testTimeout)
		defer cancel()
		if _, err := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))(pctx, t); err != nil {
			got, _ := chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || "(no element)"`, sel))(ctx, t)
			return fmt.Errorf("%s: text %q does not contain %q: %w", sel, got, want, err)
		}
		return nil
	})
}

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

func typeIn(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}

// The console in a real browser: pages load with no errors, a node made
// by a client shows in the console and one made in the console is seen
// by a client, a forbidden edit is refused with NoAuth, and screenshots
// at desktop and phone sizes are kept.
func TestBrowser(t *testing.T) {
	z := startZoo(t)
	ctx, errs := newBrowser(t)
	dir := artifactDir(t)
	cl := z.client(t)
	bg := context.Background()
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	noErrors := func(when string) {
		t.Helper()
		if e := errs.take(); len(e) > 0 {
			t.Errorf("%s: page errors: %q", when, e)
		}
	}

	// The collector sees what the page writes to its console.
	run(chromedp.Navigate(z.web.URL + DefaultPrefix + "/"))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`console.error("probe")`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the console probe", func() error {
		for _, e := range errs.take() {
			if strings.Contains(e, "probe") {
				return nil
			}
		}
		return fmt.Errorf("not seen")
	})

	// Some content, made by ordinary clients.
	owner := z.client(t, zk.WithAuth("digest", []byte("owner:secret")))
	for _, n := range [][2]string{
		{"/app", ""}, {"/app/config", `{"replicas":3,"region":"eu-west-1","features":{"search":true,"beta":false}}`},
		{"/app/locks", ""}, {"/services", ""}, {"/services/api", "10.0.0.7:8443"},
	} {
		if _, _, err := cl.Create(bg, n[0], []byte(n[1]), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := owner.Create(bg, "/locked", []byte("v1"), zk.Persistent,
		append(zk.ReadACLUnsafe(), zk.DigestACL(zk.PermAll, "owner", "secret")...)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := cl.GetW(bg, "/app/config"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Create(bg, "/app/locks/lock-", nil, zk.EphemeralSequential, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}

	base := z.web.URL + DefaultPrefix + "/"
	// The tree: a client's node is listed, its data shown as text, JSON
	// and hex.
	run(chromedp.Navigate(base+"#/tree?path=/app/config"),
		waitText("#node-path", "/app/config"),
		waitText("#data", "eu-west-1"),
		click(`#data-view button[data-view="json"]`),
		waitText("#data", `"replicas": 3`),
		waitText("#stat", "dataVersion"),
		waitText("#acl", "anyone"),
		waitText("#crumbs", "app"))
	screenshot(t, ctx, dir, "console-tree-1280x800.png", 1280, 800)
	screenshot(t, ctx, dir, "console-tree-390x844.png", 390, 844)
	run(chromedp.EmulateViewport(1280, 800),
		click(`#data-view button[data-view="hex"]`),
		waitText("#data", "00000000  7b 22"),
		click(`#data-view button[data-view="text"]`),
		chromedp.Navigate(base+"#/tree?path=/"),
		waitText("#children", "services"))
	noErrors("browsing")

	// Read-only until logged in.
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#act-create").disabled`))
	if err != nil || !disabled {
		t.Fatalf("create enabled before login (%v)", err)
	}

	// Log in, and create a node through the console: a client sees it.
	run(chromedp.Navigate(base+"#/tree?path=/app"),
		waitText("#node-path", "/app"),
		click("#login-btn"),
		typeIn("#login-user", "alice"),
		typeIn("#login-pass", "pw"),
		click("#login-submit"),
		waitText("#user", "alice"),
		click("#act-create"),
		typeIn("#edit-name", "from-console"),
		typeIn("#edit-data", "made in the browser"),
		click("#edit-submit"),
		waitText("#node-path", "/app/from-console"))
	data, _, err := cl.Get(bg, "/app/from-console")
	if err != nil || string(data) != "made in the browser" {
		t.Fatalf("a client reads the console's node: %q %v", data, err)
	}

	// A client's change shows in the console.
	if _, err := cl.Set(bg, "/app/from-console", []byte("changed by a client"), -1); err != nil {
		t.Fatal(err)
	}
	run(chromedp.Navigate(base+"#/tree?path=/app"),
		waitText("#children", "from-console"),
		click(`#children a[href$="from-console"]`),
		waitText("#data", "changed by a client"))
	noErrors("creating")

	// A forbidden edit: alice may read /locked but not write it.
	run(chromedp.Navigate(base+"#/tree?path=/locked"),
		waitText("#node-path", "/locked"),
		waitText("#data", "v1"),
		click("#act-edit"),
		typeIn("#edit-data", " and more"),
		click("#edit-submit"),
		waitText("#toast", "NoAuth (-102)"))
	if data, _, _ := owner.Get(bg, "/locked"); string(data) != "v1" {
		t.Errorf("the forbidden edit changed the data: %q", data)
	}
	// The refused request is a 403 the browser reports; nothing else.
	waitFor(t, "the browser's report of the 403", func() error {
		e := errs.take()
		if len(e) == 0 {
			return fmt.Errorf("none yet")
		}
		for _, m := range e {
			if !strings.Contains(m, "403") {
				t.Errorf("page error: %s", m)
			}
		}
		return nil
	})
	run(click(`#edit-dlg [data-close]`),
		click("#toast"), // dismissed, as a user would
		chromedp.Navigate(base+"#/tree?path=/app/config"),
		waitText("#data", "eu-west-1"),
		click(`#data-view button[data-view="json"]`),
		waitText("#data", `"replicas": 3`))
	screenshot(t, ctx, dir, "console-tree-login-1280x800.png", 1280, 800)

	// Sessions and watches, the ensemble.
	id := hex(cl.SessionID())
	run(chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(base+"#/sessions"),
		waitText("#sessions", id),
		waitText("#sessions", "/app/locks/lock-0000000000"),
		waitText("#watches", "/app/config"))
	screenshot(t, ctx, dir, "console-sessions-1280x800.png", 1280, 800)
	screenshot(t, ctx, dir, "console-sessions-390x844.png", 390, 844)
	run(chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(base+"#/ensemble"),
		waitText("#members", "standalone"),
		waitText("#ens-tiles", "last zxid"))
	screenshot(t, ctx, dir, "console-ensemble-1280x800.png", 1280, 800)

	// The charts, drawn while clients read and write.
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = cl.Set(bg, "/app/config", []byte(fmt.Sprint(i)), -1)
			_, _, _ = cl.Get(bg, "/app/config")
		}
	}()
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"#/charts"),
		waitText("#lg-rate", "writes"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			// Wait for a few samples with writes in them.
			pctx, cancel := context.WithTimeout(ctx, testTimeout)
			defer cancel()
			_, err := chromedp.Poll[bool](`(() => { const b = document.querySelectorAll("#lg-rate b");
				return b.length === 2 && parseFloat(b[1].textContent) > 0 && document.querySelectorAll("#lg-fsync b").length === 2; })()`,
				chromedp.WithPollingInterval(100*time.Millisecond))(pctx, tg)
			return err
		}))
	if err == nil {
		screenshot(t, ctx, dir, "console-charts-1280x800.png", 1280, 800)
		screenshot(t, ctx, dir, "console-charts-390x844.png", 390, 844)
	}
	close(stop)
	<-loadDone
	if err != nil {
		t.Fatal(err)
	}
	noErrors("sessions, ensemble and charts")
}

// The ensemble view of a three-server ensemble, on the leader.
func TestBrowserEnsemble(t *testing.T) {
	zs := startEnsemble(t, 3)
	ctx, errs := newBrowser(t)
	dir := artifactDir(t)
	var leader *zoo
	waitFor(t, "a leader", func() error {
		for _, z := range zs {
			if z.srv.Source().Stats().Mode == "leader" {
				leader = z
				return nil
			}
		}
		return errors.New("no leader yet")
	})
	if err := chromedp.Do(ctx,
		chromedp.Navigate(leader.web.URL+DefaultPrefix+"/#/ensemble"),
		waitText("#mode", "leader"),
		waitText("#members", "follower"),
		waitText("#members", "(this)"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			// Three rows, every link up.
			pctx, cancel := context.WithTimeout(ctx, testTimeout)
			defer cancel()
			_, err := chromedp.Poll[bool](`(() => { const rows = document.querySelectorAll("#members tbody tr");
				return rows.length === 3 && [...rows].every((r) => !r.querySelector(".pill.bad")); })()`,
				chromedp.WithPollingInterval(100*time.Millisecond))(pctx, tg)
			return err
		}),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, dir, "console-ensemble3-1280x800.png", 1280, 800)
	screenshot(t, ctx, dir, "console-ensemble3-390x844.png", 390, 844)
	if e := errs.take(); len(e) > 0 {
		t.Errorf("page errors: %q", e)
	}
}

// The tree shows the node last asked for even when an earlier answer
// comes back after it: the page's first load (the root) is held at the
// server until the node navigated to since is shown, then let go.
func TestBrowserShowsLatestNode(t *testing.T) {
	z := startZoo(t)
	ctx, _ := newBrowser(t)
	cl := z.client(t)
	if _, _, err := cl.Create(context.Background(), "/config", []byte("eu-west-1"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/node") && r.URL.Query().Get("path") == "/" {
			once.Do(func() {
				close(held)
				<-release
			})
		}
		z.console.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	var releaseOnce sync.Once
	let := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(let) // before web.Close: the held handler must end

	base := web.URL + DefaultPrefix + "/"
	if err := chromedp.Do(ctx, chromedp.Navigate(base)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(testTimeout):
		t.Fatal("the page did not ask for the root")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"#/tree?path=/config"),
		waitText("#node-path", "/config"), waitText("#data", "eu-west-1")); err != nil {
		t.Fatal(err)
	}
	let()
	waitFor(t, "both answers", func() error {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`state.answered`))
		if err != nil || n < 2 {
			return fmt.Errorf("%d answered (%v)", n, err)
		}
		return nil
	})
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#node-path").textContent`))
	if err != nil || got != "/config" {
		t.Errorf("node shown after the root's late answer: %q (%v), want /config", got, err)
	}
}
