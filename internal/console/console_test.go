package console

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/zk"
)

const testTimeout = 20 * time.Second

// waitFor polls f until it returns nil or the deadline passes.
func waitFor(t testing.TB, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zoo is an in-process standalone server and a console of it.
type zoo struct {
	srv     *server.Server
	addr    string // client port
	console *Console
	web     *httptest.Server
}

// startZoo starts a standalone server on a free port and the console in
// front of it, stopping both when the test ends.
func startZoo(t testing.TB) *zoo {
	t.Helper()
	z := startZooWith(t, nil)
	waitFor(t, "server serving", func() error {
		if !z.srv.Source().Serving() {
			return errors.New("not serving")
		}
		return nil
	})
	return z
}

// startZooWith starts a server configured by edit (if not nil) and its
// console.
func startZooWith(t testing.TB, edit func(*server.Config)) *zoo {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := server.Config{Logger: log, Version: "3.9.2-zoo", FourLetterWords: []string{"*"}, DataDir: t.TempDir()}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	z := &zoo{srv: srv, addr: ln.Addr().String()}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	z.console = New(Config{
		Connect: func(ctx context.Context, opts ...zk.Option) (*zk.Client, error) {
			return zk.Connect(ctx, z.addr, opts...)
		},
		Source:   srv.Source(),
		Metrics:  srv.Metrics(),
		Ensemble: EnsembleOf(srv),
		Logger:   log,
	})
	z.web = httptest.NewServer(z.console)
	t.Cleanup(func() {
		z.web.Close()
		z.console.Close()
	})
	return z
}

// startEnsemble starts n servers replicating with each other, each with
// its console.
func startEnsemble(t testing.TB, n int) []*zoo {
	t.Helper()
	var voters []uint64
	lns := map[uint64]net.Listener{}
	membership := ""
	for id := uint64(1); id <= uint64(n); id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		voters, lns[id] = append(voters, id), ln
		membership += fmt.Sprintf("server.%d=%s:%d:participant\n", id, ln.Addr(), id)
	}
	membership += "version=0"
	var out []*zoo
	for id := uint64(1); id <= uint64(n); id++ {
		e := server.Ensemble{Voters: voters, Peers: map[uint64]string{}, Listener: lns[id], Membership: membership}
		for other, ln := range lns {
			if other != id {
				e.Peers[other] = ln.Addr().String()
			}
		}
		out = append(out, startZooWith(t, func(c *server.Config) {
			c.ServerID, c.TickTime, c.Ensemble = int64(id), 200*time.Millisecond, e
		}))
	}
	return out
}

// client connects a ZooKeeper client to the server, as any user would.
func (z *zoo) client(t testing.TB, opts ...zk.Option) *zk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := zk.Connect(ctx, z.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// browser is an HTTP client with a cookie jar, as a browser on the page.
type browser struct {
	t    testing.TB
	base string
	hc   *http.Client
	csrf string
}

func (z *zoo) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: z.web.URL + DefaultPrefix, hc: &http.Client{Jar: jar}}
}

// do sends a request with a JSON body (nil: none) and decodes the answer
// into out (nil: ignored); it returns the status.
func (b *browser) do(method, path string, body any, out any, hdr ...string) int {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.csrf != "" {
		req.Header.Set(csrfHeader, b.csrf)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("%s %s: %v in %q", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

func (b *browser) login(user, password string) me {
	b.t.Helper()
	var m me
	if st := b.do("POST", "/api/login", map[string]string{"user": user, "password": password}, &m); st != http.StatusOK {
		b.t.Fatalf("login: status %d", st)
	}
	b.csrf = m.CSRF
	return m
}

// Before a login the console reads but refuses every change.
func TestReadOnlyUntilLogin(t *testing.T) {
	z := startZoo(t)
	cl := z.client(t)
	if _, _, err := cl.Create(context.Background(), "/fromclient", []byte(`{"a":1}`), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	b := z.browser(t)
	var n node
	if st := b.do("GET", "/api/node?path=/fromclient", nil, &n); st != http.StatusOK {
		t.Fatalf("get: %d", st)
	}
	if string(n.Data) != `{"a":1}` || n.Stat.Version != 0 || len(n.ACL) != 1 || n.ACL[0].Perms != "cdrwa" {
		t.Errorf("node %+v", n)
	}
	var root node
	b.do("GET", "/api/node?path=/", nil, &root)
	if !slices.Contains(root.Children, "fromclient") {
		t.Errorf("root children %v", root.Children)
	}
	var e apiError
	if st := b.do("POST", "/api/node", map[string]string{"path": "/x"}, &e); st != http.StatusUnauthorized {
		t.Errorf("create without login: %d %+v", st, e)
	}
	if st := b.do("DELETE", "/api/node?path=/fromclient", nil, &e); st != http.StatusUnauthorized {
		t.Errorf("delete without login: %d %+v", st, e)
	}
	if ok, _, _ := cl.Exists(context.Background(), "/fromclient"); !ok {
		t.Error("the node went")
	}
	var m me
	b.do("GET", "/api/me", nil, &m)
	if m.User != "" || m.CSRF != "" || !m.Tree {
		t.Errorf("me %+v", m)
	}
}

// A login sets an HttpOnly, SameSite=Strict cookie; the console's writes
// are then seen by other clients, and need the CSRF token.
func TestLoginWrites(t *testing.T) {
	z := startZoo(t)
	cl := z.client(t)
	b := z.browser(t)

	// The password travels in a POST body, never the URL; a form post
	// (which any site could send) is refused.
	resp, err := http.PostForm(b.base+"/api/login", url.Values{"user": {"alice"}, "password": {"pw"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("form login: %d", resp.StatusCode)
	}

	j, _ := json.Marshal(map[string]string{"user": "alice", "password": "pw"})
	resp, err = b.hc.Post(b.base+"/api/login", "application/json", bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	var m me
	_ = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != cookieName {
		t.Fatalf("cookies %+v", cookies)
	}
	// The cookie holds only a random id (32 bytes, base64url), never the
	// password. (A substring test for "pw" failed one run in ~100: a
	// random id contains it by chance.)
	if id, err := base64.RawURLEncoding.DecodeString(cookies[0].Value); err != nil || len(id) != 32 {
		t.Fatalf("cookie %q: not a 32-byte random id (%v)", cookies[0].Value, err)
	}
	if m.User != "alice" || m.DigestID != zk.Digest("alice", "pw") || m.CSRF == "" {
		t.Fatalf("login answer %+v", m)
	}

	// Without the CSRF token, or from another origin: refused.
	var e apiError
	if st := b.do("POST", "/api/node", map[string]string{"path": "/c"}, &e); st != http.StatusForbidden {
		t.Errorf("create without CSRF token: %d %+v", st, e)
	}
	b.csrf = m.CSRF
	if st := b.do("POST", "/api/node", map[string]string{"path": "/c"}, &e, "Origin", "http://evil.example"); st != http.StatusForbidden {
		t.Errorf("create from another origin: %d %+v", st, e)
	}

	var w written
	if st := b.do("POST", "/api/node", map[string]any{"path": "/c", "data": "hello", "acl": "creator"}, &w); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	data, _, err := cl.Get(context.Background(), "/c")
	if !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous get of a creator-only node: %q %v", data, err)
	}
	alice := z.client(t, zk.WithAuth("digest", []byte("alice:pw")))
	data, st, err := alice.Get(context.Background(), "/c")
	if err != nil || string(data) != "hello" {
		t.Fatalf("alice's client reads %q %v", data, err)
	}
	acl, _, _ := alice.GetACL(context.Background(), "/c")
	if len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].ID != zk.Digest("alice", "pw") {
		t.Errorf("acl %+v", acl)
	}

	// Set with the version read, then with a stale one.
	v := st.Version
	if s := b.do("PUT", "/api/node", map[string]any{"path": "/c", "data": "AAEC", "encoding": "base64", "version": v}, &w); s != http.StatusOK {
		t.Fatalf("set: %d", s)
	}
	if data, _, _ := alice.Get(context.Background(), "/c"); !bytes.Equal(data, []byte{0, 1, 2}) {
		t.Errorf("after set: %v", data)
	}
	if s := b.do("PUT", "/api/node", map[string]any{"path": "/c", "data": "x", "version": v}, &e); s != http.StatusConflict || e.Name != "BadVersion" {
		t.Errorf("stale set: %d %+v", s, e)
	}
	// Sequential create names the node it made.
	if s := b.do("POST", "/api/node", map[string]any{"path": "/c/s-", "mode": "persistent_sequential"}, &w); s != http.StatusCreated || w.Path != "/c/s-0000000000" {
		t.Errorf("sequential: %d %+v", s, w)
	}
	if s := b.do("DELETE", "/api/node?path=/c", nil, &e); s != http.StatusConflict || e.Name != "NotEmpty" {
		t.Errorf("delete non-empty: %d %+v", s, e)
	}
	b.do("DELETE", "/api/node?path=/c/s-0000000000", nil, nil)
	if s := b.do("DELETE", "/api/node?path=/c", nil, &e); s != http.StatusOK {
		t.Errorf("delete: %d %+v", s, e)
	}
	if ok, _, _ := cl.Exists(context.Background(), "/c"); ok {
		t.Error("/c still exists")
	}

	// After logout the cookie is gone and so is the right to write.
	b.do("POST", "/api/logout", nil, nil)
	if s := b.do("POST", "/api/node", map[string]string{"path": "/d"}, &e); s != http.StatusUnauthorized {
		t.Errorf("create after logout: %d", s)
	}
}

// A write the ACL forbids is refused with ZooKeeper's NoAuth, exactly as
// for a client with the same identity.
func TestForbiddenEdit(t *testing.T) {
	z := startZoo(t)
	owner := z.client(t, zk.WithAuth("digest", []byte("owner:secret")))
	acl := append(zk.ReadACLUnsafe(), zk.DigestACL(zk.PermAll, "owner", "secret")...)
	if _, _, err := owner.Create(context.Background(), "/locked", []byte("v1"), zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	b := z.browser(t)
	b.login("mallory", "secret")
	var e apiError
	if s := b.do("PUT", "/api/node", map[string]any{"path": "/locked", "data": "v2"}, &e); s != http.StatusForbidden || e.Code != -102 || e.Name != "NoAuth" {
		t.Errorf("set: %d %+v", s, e)
	}
	if s := b.do("DELETE", "/api/node?path=/locked", nil, &e); s != http.StatusOK {
		// Deleting needs DELETE on the parent (world: all), not on the node.
		t.Errorf("delete: %d %+v", s, e)
	}
	if _, _, err := owner.Create(context.Background(), "/locked", []byte("v1"), zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	if s := b.do("POST", "/api/node", map[string]any{"path": "/locked/kid"}, &e); s != http.StatusForbidden || e.Name != "NoAuth" {
		t.Errorf("create child: %d %+v", s, e)
	}
	if data, _, _ := owner.Get(context.Background(), "/locked"); string(data) != "v1" {
		t.Errorf("data %q", data)
	}
	// The owner's identity may.
	b2 := z.browser(t)
	b2.login("owner", "secret")
	if s := b2.do("PUT", "/api/node", map[string]any{"path": "/locked", "data": "v2"}, &e); s != http.StatusOK {
		t.Errorf("owner's set: %d %+v", s, e)
	}
}

// A node whose data the session may not read still shows its Stat, with
// the reason for what is missing.
func TestUnreadableNode(t *testing.T) {
	z := startZoo(t)
	owner := z.client(t, zk.WithAuth("digest", []byte("owner:secret")))
	if _, _, err := owner.Create(context.Background(), "/secret", []byte("s"), zk.Persistent, zk.DigestACL(zk.PermAll, "owner", "secret")); err != nil {
		t.Fatal(err)
	}
	var n node
	if s := z.browser(t).do("GET", "/api/node?path=/secret", nil, &n); s != http.StatusOK {
		t.Fatalf("get: %d", s)
	}
	if n.Data != nil || !strings.HasPrefix(n.Errors["data"], "NoAuth: ") || !strings.HasPrefix(n.Errors["children"], "NoAuth: ") || n.Stat.DataLength != 1 {
		t.Errorf("node %+v", n)
	}
}

func TestBadRequests(t *testing.T) {
	z := startZoo(t)
	b := z.browser(t)
	var e apiError
	for _, p := range []string{"a", "/a/", "//a", "/a/../b", "/a/."} {
		if s := b.do("GET", "/api/node?path="+url.QueryEscape(p), nil, &e); s != http.StatusBadRequest {
			t.Errorf("path %q: %d %+v", p, s, e)
		}
	}
	if s := b.do("GET", "/api/node?path=/nope", nil, &e); s != http.StatusNotFound || e.Name != "NoNode" {
		t.Errorf("missing node: %d %+v", s, e)
	}
	if s := b.do("POST", "/api/login", map[string]string{"user": "a:b"}, &e); s != http.StatusBadRequest {
		t.Errorf("user with a colon: %d", s)
	}
	b.login("u", "p")
	for _, body := range []map[string]any{
		{"path": "/x", "encoding": "base64", "data": "!!"},
		{"path": "/x", "mode": "ephemeral"},
		{"path": "/x", "acl": "everyone"},
		{"path": "/x", "surprise": 1},
	} {
		if s := b.do("POST", "/api/node", body, &e); s != http.StatusBadRequest {
			t.Errorf("%v: %d %+v", body, s, e)
		}
	}
}

func TestSearch(t *testing.T) {
	z := startZoo(t)
	cl := z.client(t)
	for _, p := range []string{"/app", "/app/config", "/app/locks", "/app/locks/lock-1", "/other"} {
		if _, _, err := cl.Create(context.Background(), p, nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	var r searchResult
	z.browser(t).do("GET", "/api/search?path=/app&q=LOCK", nil, &r)
	if !slices.Equal(r.Paths, []string{"/app/locks", "/app/locks/lock-1"}) || !r.Complete || r.Visited != 4 {
		t.Errorf("search %+v", r)
	}
}

// The sessions view lists every session with its client address,
// timeout, ephemerals and watches; the watches view lists paths.
func TestSessionsAndWatches(t *testing.T) {
	z := startZoo(t)
	cl := z.client(t)
	ctx := context.Background()
	if _, _, err := cl.Create(ctx, "/eph", nil, zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := cl.GetW(ctx, "/eph"); err != nil {
		t.Fatal(err)
	}
	id := hex(cl.SessionID())
	var v sessionsView
	z.browser(t).do("GET", "/api/sessions", nil, &v)
	i := slices.IndexFunc(v.Sessions, func(s sessionRow) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("session %s not in %+v", id, v.Sessions)
	}
	s := v.Sessions[i]
	if !strings.HasPrefix(s.Remote, "127.0.0.1:") || s.Timeout <= 0 || !slices.Equal(s.Ephemerals, []string{"/eph"}) || s.Watches != 1 {
		t.Errorf("session %+v", s)
	}
	if len(v.Watches) != 1 || v.Watches[0].Path != "/eph" || !slices.Equal(v.Watches[0].Sessions, []string{id}) {
		t.Errorf("watches %+v", v.Watches)
	}
}

// The charts' sample counts writes and fsyncs as they happen.
func TestStats(t *testing.T) {
	z := startZoo(t)
	b := z.browser(t)
	var before, after sample
	b.do("GET", "/api/stats", nil, &before)
	cl := z.client(t)
	for i := 0; i < 5; i++ {
		if _, err := cl.Set(context.Background(), "/", []byte{byte(i)}, -1); err != nil {
			t.Fatal(err)
		}
	}
	b.do("GET", "/api/stats", nil, &after)
	if after.Writes-before.Writes < 5 || after.Fsync.Count <= before.Fsync.Count || after.Received <= before.Received {
		t.Errorf("before %+v after %+v", before, after)
	}
	if len(after.Fsync.Bounds) == 0 || len(after.Fsync.Bounds) != len(after.Fsync.Counts) || len(after.WriteLatency) != 4 {
		t.Errorf("sample %+v", after)
	}
	var e ensembleView
	b.do("GET", "/api/ensemble", nil, &e)
	if !e.Standalone || e.Mode != "standalone" || !e.Serving || len(e.Members) != 1 {
		t.Errorf("ensemble %+v", e)
	}
}

// The page and its files are served with a policy that loads nothing
// from elsewhere.
func TestAssets(t *testing.T) {
	z := startZoo(t)
	for _, p := range []string{"/", "/app.js", "/app.css", "/favicon.svg"} {
		resp, err := http.Get(z.web.URL + DefaultPrefix + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if bytes.Contains(body, []byte("http://")) || bytes.Contains(body, []byte("https://")) {
			if !bytes.Contains(body, []byte("http://www.w3.org/2000/svg")) {
				t.Errorf("%s refers to another site", p)
			}
		}
	}
}

// Logins are bounded: past MaxLogins the least recently used one ends,
// and its ZooKeeper session with it.
func TestLoginBound(t *testing.T) {
	z := startZoo(t)
	z.console.cfg.MaxLogins = 2
	z.console.logins.max = 2
	var bs []*browser
	for _, u := range []string{"a", "b", "c"} {
		b := z.browser(t)
		b.login(u, "p")
		bs = append(bs, b)
	}
	var m me
	bs[0].do("GET", "/api/me", nil, &m)
	if m.User != "" {
		t.Errorf("the oldest login is still there: %+v", m)
	}
	bs[2].do("GET", "/api/me", nil, &m)
	if m.User != "c" {
		t.Errorf("newest login: %+v", m)
	}
}

// On an ensemble the console shows every member with its role, and the
// leader's console each member's link and replication progress.
func TestEnsembleView(t *testing.T) {
	zs := startEnsemble(t, 3)
	var leader *zoo
	waitFor(t, "a leader", func() error {
		leader = nil
		for _, z := range zs {
			var v ensembleView
			z.browser(t).do("GET", "/api/ensemble", nil, &v)
			if v.Mode == "leader" {
				leader = z
			}
		}
		if leader == nil {
			return errors.New("no leader yet")
		}
		return nil
	})
	waitFor(t, "every member replicating", func() error {
		var v ensembleView
		leader.browser(t).do("GET", "/api/ensemble", nil, &v)
		if v.Standalone || len(v.Members) != 3 || v.Term <= 0 || v.LeaderID != v.MyID {
			return fmt.Errorf("view %+v", v)
		}
		roles := map[string]int{}
		for _, m := range v.Members {
			roles[m.Role]++
			if !m.Live || (!m.Self && (m.Match <= 0 || m.Lag < 0)) || m.QuorumAddr == "" {
				return fmt.Errorf("member %+v", m)
			}
		}
		if roles["leader"] != 1 || roles["follower"] != 2 {
			return fmt.Errorf("roles %v", roles)
		}
		return nil
	})
	for _, z := range zs {
		if z == leader {
			continue
		}
		var v ensembleView
		z.browser(t).do("GET", "/api/ensemble", nil, &v)
		if v.Mode != "follower" || v.LeaderID == v.MyID || len(v.Members) != 3 {
			t.Errorf("a follower's view %+v", v)
		}
		for _, m := range v.Members {
			if !m.Self && m.Match != -1 {
				t.Errorf("a follower knows member %d's progress: %+v", m.ID, m)
			}
		}
	}
}

// After Close the console's ZooKeeper sessions are gone and the tree
// answers 503; the rest of the console still answers.
func TestClose(t *testing.T) {
	z := startZoo(t)
	b := z.browser(t)
	b.login("u", "p")
	var n node
	if s := b.do("GET", "/api/node?path=/", nil, &n); s != http.StatusOK {
		t.Fatalf("before Close: %d", s)
	}
	z.console.Close()
	var e apiError
	if s := z.browser(t).do("GET", "/api/node?path=/", nil, &e); s != http.StatusServiceUnavailable {
		t.Errorf("node after Close: %d %+v", s, e)
	}
	if s := z.browser(t).do("POST", "/api/login", map[string]string{"user": "v", "password": "p"}, &e); s != http.StatusServiceUnavailable {
		t.Errorf("login after Close: %d %+v", s, e)
	}
	if s := b.do("GET", "/api/stats", nil, nil); s != http.StatusOK {
		t.Errorf("stats after Close: %d", s)
	}
	waitFor(t, "the console's sessions closed", func() error {
		for _, c := range z.srv.Source().Connections() {
			if c.SessionID != 0 {
				return fmt.Errorf("session %#x still connected", c.SessionID)
			}
		}
		return nil
	})
}
