package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/zoohq/zoo/zk"
)

// cookieName is the console's session cookie. It holds only a random id;
// the password never leaves the login request.
const cookieName = "zoo_console"

// csrfHeader carries the login's CSRF token on every write. A page of
// another origin cannot read the token, and SameSite=Strict keeps the
// cookie off its requests anyway: two defences, as OWASP advises.
const csrfHeader = "X-Zoo-CSRF"

// login is one logged-in console user: a ZooKeeper session carrying the
// user's digest identity, used for every request of that browser.
type login struct {
	id     string
	user   string
	csrf   string
	digest string // the ACL id, user:base64(sha1(user:password))
	client *zk.Client
	last   time.Time
}

// logins holds the logged-in console users, at most max, each ended after
// idle without a request.
type logins struct {
	max  int
	idle time.Duration
	now  func() time.Time

	mu     sync.Mutex
	by     map[string]*login
	closed bool // after closeAll: no more logins
}

func newLogins(max int, idle time.Duration, now func() time.Time) *logins {
	return &logins{max: max, idle: idle, now: now, by: map[string]*login{}}
}

// get returns the request's login, or nil. Idle or dead logins are ended
// on the way.
func (ls *logins) get(r *http.Request) *login {
	ck, err := r.Cookie(cookieName)
	ls.mu.Lock()
	ended := ls.sweepLocked()
	var l *login
	if err == nil {
		if l = ls.by[ck.Value]; l != nil {
			l.last = ls.now()
		}
	}
	ls.mu.Unlock()
	closeLogins(ended)
	return l
}

// sweepLocked removes idle logins and those whose session has ended, and
// returns them to be closed outside the lock.
func (ls *logins) sweepLocked() []*login {
	var out []*login
	now := ls.now()
	for id, l := range ls.by {
		if now.Sub(l.last) > ls.idle || dead(l.client) {
			delete(ls.by, id)
			out = append(out, l)
		}
	}
	return out
}

// add registers a new login, ending the least recently used one past max.
// After closeAll it ends l instead and returns false.
func (ls *logins) add(l *login) bool {
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		closeLogins([]*login{l})
		return false
	}
	ended := ls.sweepLocked()
	if len(ls.by) >= ls.max {
		var oldest *login
		for _, o := range ls.by {
			if oldest == nil || o.last.Before(oldest.last) {
				oldest = o
			}
		}
		delete(ls.by, oldest.id)
		ended = append(ended, oldest)
	}
	l.last = ls.now()
	ls.by[l.id] = l
	ls.mu.Unlock()
	closeLogins(ended)
	return true
}

func (ls *logins) remove(id string) {
	ls.mu.Lock()
	l := ls.by[id]
	delete(ls.by, id)
	ls.mu.Unlock()
	if l != nil {
		closeLogins([]*login{l})
	}
}

func (ls *logins) closeAll() {
	ls.mu.Lock()
	var all []*login
	for _, l := range ls.by {
		all = append(all, l)
	}
	clear(ls.by)
	ls.closed = true
	ls.mu.Unlock()
	closeLogins(all)
}

func closeLogins(ls []*login) {
	for _, l := range ls {
		_ = l.client.Close()
	}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// me is who is logged in.
type me struct {
	User     string `json:"user,omitempty"`
	DigestID string `json:"digestId,omitempty"` // the ACL id: user:base64(sha1(user:password))
	CSRF     string `json:"csrf,omitempty"`
	Tree     bool   `json:"tree"` // whether the tree can be browsed
}

func (c *Console) me(w http.ResponseWriter, r *http.Request) {
	out := me{Tree: c.cfg.Connect != nil}
	if l := c.logins.get(r); l != nil {
		out.User, out.DigestID, out.CSRF = l.user, l.digest, l.csrf
	}
	writeJSON(w, http.StatusOK, out)
}

// loginTimeout bounds opening the user's ZooKeeper session.
const loginTimeout = 10 * time.Second

// login opens a ZooKeeper session with the user's digest credentials.
// Like zkCli's addauth, it cannot fail for a wrong password: digest
// identities are whatever the user says; the ACLs decide what they may do.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		c.fail(w, err)
		return
	}
	// A JSON body cannot be sent cross-origin without a CORS preflight,
	// which this server never grants: no login CSRF.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		c.fail(w, fmt.Errorf("%w: the login takes a JSON body", errBadRequest))
		return
	}
	var body struct{ User, Password string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil {
		c.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	if body.User == "" || strings.ContainsAny(body.User, ": \t\r\n") {
		c.fail(w, fmt.Errorf("%w: a user name is needed, without ':' or spaces", errBadRequest))
		return
	}
	if c.cfg.Connect == nil {
		c.fail(w, ErrNoTree)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), loginTimeout)
	defer cancel()
	cl, err := c.cfg.Connect(ctx, zk.WithAuth("digest", []byte(body.User+":"+body.Password)))
	if err != nil {
		c.fail(w, err)
		return
	}
	// The digest id is computed from the password once, here, and kept
	// for display; the password itself is not kept.
	l := &login{id: randomToken(), user: body.User, csrf: randomToken(), client: cl,
		digest: zk.DigestACL(0, body.User, body.Password)[0].ID}
	if !c.logins.add(l) {
		c.fail(w, ErrNoTree)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: l.id, Path: c.cfg.Prefix + "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.cfg.SecureCookies,
	})
	c.cfg.Logger.Info("console: login", "user", body.User, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, me{User: l.user, DigestID: l.digest, CSRF: l.csrf, Tree: true})
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, l *login) {
	c.logins.remove(l.id)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: c.cfg.Prefix + "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.cfg.SecureCookies,
	})
	writeJSON(w, http.StatusOK, me{Tree: c.cfg.Connect != nil})
}

// write wraps a handler that changes something: it needs a login, the
// login's CSRF token and, when the browser names one, this origin.
func (c *Console) write(h func(http.ResponseWriter, *http.Request, *login)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := sameOrigin(r); err != nil {
			c.fail(w, err)
			return
		}
		l := c.logins.get(r)
		if l == nil {
			c.fail(w, ErrLoginNeeded)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(l.csrf)) != 1 {
			c.fail(w, ErrCSRF)
			return
		}
		h(w, r, l)
	}
}

// sameOrigin refuses a request whose Origin header names another host.
func sameOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || u.Host != r.Host {
		return fmt.Errorf("%w: origin %q", ErrCSRF, o)
	}
	return nil
}
