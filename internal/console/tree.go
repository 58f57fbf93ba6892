package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// requestTimeout bounds one API call's ZooKeeper requests.
const requestTimeout = 10 * time.Second

// Bounds that keep one API call small whatever the tree holds.
const (
	maxChildren     = 5000          // children listed for one node
	maxSearchVisits = 20000         // nodes a search looks at
	maxSearchHits   = 200           // paths a search returns
	maxBody         = 2<<20 + 65536 // a write's body: data up to jute.maxbuffer, base64'd
)

// stat is a znode's Stat as zkCli prints it: zxids and the ephemeral
// owner in hex (they do not fit a JavaScript number), the rest as numbers.
type stat struct {
	Czxid          string `json:"czxid"`
	Mzxid          string `json:"mzxid"`
	Pzxid          string `json:"pzxid"`
	Ctime          int64  `json:"ctime"`
	Mtime          int64  `json:"mtime"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Aversion       int32  `json:"aversion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

func hex(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

func statOf(s zk.Stat) stat {
	return stat{Czxid: hex(s.Czxid), Mzxid: hex(s.Mzxid), Pzxid: hex(s.Pzxid),
		Ctime: s.Ctime, Mtime: s.Mtime, Version: s.Version, Cversion: s.Cversion,
		Aversion: s.Aversion, EphemeralOwner: hex(s.EphemeralOwner),
		DataLength: s.DataLength, NumChildren: s.NumChildren}
}

// aclEntry is one ACL entry, perms as zkCli's getAcl spells them.
type aclEntry struct {
	Perms  string `json:"perms"`
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
}

func permString(p int32) string {
	var b strings.Builder
	for _, f := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if p&f.bit != 0 {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}

// node is GET /api/node's answer. A part the session may not read (NoAuth)
// is left out and its error given in Errors.
type node struct {
	Path      string            `json:"path"`
	Stat      stat              `json:"stat"`
	Data      []byte            `json:"data"` // base64 in JSON
	Children  []string          `json:"children"`
	Truncated bool              `json:"truncated,omitempty"`
	ACL       []aclEntry        `json:"acl"`
	Errors    map[string]string `json:"errors,omitempty"`
}

// checkPath refuses what is not an absolute znode path before it reaches
// the server (which would refuse it too, less clearly).
func checkPath(p string) error {
	switch {
	case p == "/":
		return nil
	case !strings.HasPrefix(p, "/"), strings.HasSuffix(p, "/"), strings.Contains(p, "//"),
		strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: %q is not a znode path (absolute, no trailing or double '/')", errBadRequest, p)
	}
	for _, part := range strings.Split(p[1:], "/") {
		if part == "." || part == ".." {
			return fmt.Errorf("%w: %q: '.' and '..' are not allowed in a path", errBadRequest, p)
		}
	}
	return nil
}

// onPath starts a request about the znode in its path parameter ("/" when
// absent): it checks the path, bounds the request by requestTimeout and
// finds the login's client. If it returns ok false it has answered the
// request with the error; otherwise the caller calls cancel when done.
func (c *Console) onPath(w http.ResponseWriter, r *http.Request) (p string, ctx context.Context, cancel context.CancelFunc, cl *zk.Client, ok bool) {
	p = r.URL.Query().Get("path")
	if p == "" {
		p = "/"
	}
	if err := checkPath(p); err != nil {
		c.fail(w, err)
		return "", nil, nil, nil, false
	}
	ctx, cancel = context.WithTimeout(r.Context(), requestTimeout)
	cl, err := c.client(ctx, r)
	if err != nil {
		cancel()
		c.fail(w, err)
		return "", nil, nil, nil, false
	}
	return p, ctx, cancel, cl, true
}

func (c *Console) getNode(w http.ResponseWriter, r *http.Request) {
	p, ctx, cancel, cl, ok := c.onPath(w, r)
	if !ok {
		return
	}
	defer cancel()
	// exists needs no permission: the Stat is shown even when the data
	// is not readable, as zkCli's stat shows it.
	ok, st, err := cl.Exists(ctx, p)
	if err == nil && !ok {
		err = zk.ErrNoNode
	}
	if err != nil {
		c.fail(w, err)
		return
	}
	n := node{Path: p, Stat: statOf(st), Children: []string{}, ACL: []aclEntry{}}
	partErr := func(part string, err error) {
		if n.Errors == nil {
			n.Errors = map[string]string{}
		}
		msg := strings.TrimPrefix(err.Error(), "zk: ")
		var code zk.Code
		if errors.As(err, &code) {
			msg = code.String() + ": " + msg
		}
		n.Errors[part] = msg
	}
	if data, st, err := cl.Get(ctx, p); err != nil {
		partErr("data", err)
	} else {
		n.Data, n.Stat = data, statOf(st)
	}
	if kids, _, err := cl.Children(ctx, p); err != nil {
		partErr("children", err)
	} else {
		slices.Sort(kids)
		if len(kids) > maxChildren {
			kids, n.Truncated = kids[:maxChildren], true
		}
		n.Children = append(n.Children, kids...)
	}
	if acls, _, err := cl.GetACL(ctx, p); err != nil {
		partErr("acl", err)
	} else {
		for _, a := range acls {
			n.ACL = append(n.ACL, aclEntry{Perms: permString(a.Perms), Scheme: a.Scheme, ID: a.ID})
		}
	}
	writeJSON(w, http.StatusOK, n)
}

// searchResult is GET /api/search's answer.
type searchResult struct {
	Paths []string `json:"paths"`
	// Complete is false when the walk stopped at its bounds or time
	// limit; Unreadable counts nodes whose children the session may not
	// list.
	Complete   bool `json:"complete"`
	Visited    int  `json:"visited"`
	Unreadable int  `json:"unreadable"`
}

// search walks the tree under path, breadth first, for paths containing q
// (case-insensitive), within the bounds above.
func (c *Console) search(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(r.URL.Query().Get("q"))
	root, ctx, cancel, cl, ok := c.onPath(w, r)
	if !ok {
		return
	}
	defer cancel()
	res := searchResult{Paths: []string{}, Complete: true}
	queue := []string{root}
	for len(queue) > 0 {
		if res.Visited >= maxSearchVisits || len(res.Paths) >= maxSearchHits || ctx.Err() != nil {
			res.Complete = false
			break
		}
		p := queue[0]
		queue = queue[1:]
		res.Visited++
		if strings.Contains(strings.ToLower(p), q) {
			res.Paths = append(res.Paths, p)
		}
		kids, _, err := cl.Children(ctx, p)
		if err != nil {
			if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrNoNode) {
				res.Unreadable++
				continue
			}
			c.fail(w, err)
			return
		}
		slices.Sort(kids)
		for _, k := range kids {
			queue = append(queue, strings.TrimSuffix(p, "/")+"/"+k)
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// writeBody is the body of a create or set.
type writeBody struct {
	Path string `json:"path"`
	Data string `json:"data"`
	// Encoding is how Data is given: "text" (UTF-8, the default) or
	// "base64" (any bytes; the hex view sends this).
	Encoding string `json:"encoding"`
	// Version is the expected version for set; nil is any (-1).
	Version *int32 `json:"version"`
	// Mode is the create mode: persistent (default), persistent_sequential,
	// container.
	Mode string `json:"mode"`
	// ACL is the new node's ACL: "open" (world:anyone:cdrwa, zkCli's
	// default), "creator" (auth: all for the logged-in user), "read"
	// (world:anyone:r plus creator all).
	ACL string `json:"acl"`
}

func decodeWrite(r *http.Request) (writeBody, []byte, error) {
	var b writeBody
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, nil, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if err := checkPath(b.Path); err != nil {
		return b, nil, err
	}
	switch b.Encoding {
	case "", "text":
		return b, []byte(b.Data), nil
	case "base64":
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return b, nil, fmt.Errorf("%w: data is not base64: %v", errBadRequest, err)
		}
		return b, data, nil
	}
	return b, nil, fmt.Errorf("%w: encoding %q (text or base64)", errBadRequest, b.Encoding)
}

var createModes = map[string]zk.CreateMode{
	"": zk.Persistent, "persistent": zk.Persistent,
	"persistent_sequential": zk.PersistentSequential, "container": zk.Container,
}

func aclFor(name string) ([]zk.ACL, error) {
	switch name {
	case "", "open":
		return zk.OpenACLUnsafe(), nil
	case "creator":
		return zk.CreatorAllACL(), nil
	case "read":
		return append(zk.ReadACLUnsafe(), zk.CreatorAllACL()...), nil
	}
	return nil, fmt.Errorf("%w: acl %q (open, creator or read)", errBadRequest, name)
}

// written is the answer to a create or set: the node's path (a sequential
// create's final name) and Stat.
type written struct {
	Path string `json:"path"`
	Stat stat   `json:"stat"`
}

func (c *Console) createNode(w http.ResponseWriter, r *http.Request, l *login) {
	b, data, err := decodeWrite(r)
	if err != nil {
		c.fail(w, err)
		return
	}
	mode, ok := createModes[b.Mode]
	if !ok {
		c.fail(w, fmt.Errorf("%w: mode %q (persistent, persistent_sequential or container)", errBadRequest, b.Mode))
		return
	}
	acl, err := aclFor(b.ACL)
	if err != nil {
		c.fail(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	p, st, err := l.client.Create(ctx, b.Path, data, mode, acl)
	if err != nil {
		c.fail(w, err)
		return
	}
	c.cfg.Logger.Info("console: create", "user", l.user, "path", p)
	writeJSON(w, http.StatusCreated, written{Path: p, Stat: statOf(st)})
}

func (c *Console) setNode(w http.ResponseWriter, r *http.Request, l *login) {
	b, data, err := decodeWrite(r)
	if err != nil {
		c.fail(w, err)
		return
	}
	version := int32(-1)
	if b.Version != nil {
		version = *b.Version
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	st, err := l.client.Set(ctx, b.Path, data, version)
	if err != nil {
		c.fail(w, err)
		return
	}
	c.cfg.Logger.Info("console: set", "user", l.user, "path", b.Path)
	writeJSON(w, http.StatusOK, written{Path: b.Path, Stat: statOf(st)})
}

func (c *Console) deleteNode(w http.ResponseWriter, r *http.Request, l *login) {
	q := r.URL.Query()
	p := q.Get("path")
	if err := checkPath(p); err != nil {
		c.fail(w, err)
		return
	}
	version := int64(-1)
	if v := q.Get("version"); v != "" {
		var err error
		if version, err = strconv.ParseInt(v, 10, 32); err != nil {
			c.fail(w, fmt.Errorf("%w: version %q", errBadRequest, v))
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := l.client.Delete(ctx, p, int32(version)); err != nil {
		c.fail(w, err)
		return
	}
	c.cfg.Logger.Info("console: delete", "user", l.user, "path", p)
	writeJSON(w, http.StatusOK, written{Path: p})
}
