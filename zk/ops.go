package zk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Every operation comes in two forms. The synchronous one waits for the
// reply within ctx; if ctx ends first it returns ctx's error: a request
// not yet sent (the client was between connections) is dropped, one
// already sent may still take effect.
//
// The asynchronous one (…Async) returns once the call is queued: it waits
// only for room under WithMaxInFlight, within ctx. If it returns an error
// the callback is never called; otherwise the callback is called exactly
// once, on the Client's callback goroutine, and callbacks run one at a
// time in the order the calls were made (the server answers a session's
// requests in order). A callback may make further calls, synchronous or
// not, but should not block for long: it holds up the callbacks behind it.
//
// Every error except a context error is an *Error naming the operation
// and path; test it with errors.Is against the Err* values.

// CreateMode is the kind of node Create makes (CreateMode.toFlag()).
type CreateMode int32

// The kinds of node, with the protocol's numbers (CreateMode.toFlag()).
// Sequential modes append a 10-digit counter, unique under the parent,
// to the name; TTL modes need CreateTTL and a server with extended types.
const (
	Persistent                  CreateMode = 0
	Ephemeral                   CreateMode = 1 // deleted when the session ends
	PersistentSequential        CreateMode = 2 // the name gets a 10-digit suffix, unique under the parent
	EphemeralSequential         CreateMode = 3
	Container                   CreateMode = 4 // deleted by the server once its last child is gone
	PersistentWithTTL           CreateMode = 5 // deleted once unchanged and childless for its TTL (CreateTTL)
	PersistentSequentialWithTTL CreateMode = 6
)

func (m CreateMode) sequential() bool {
	return m == PersistentSequential || m == EphemeralSequential || m == PersistentSequentialWithTTL
}

func (m CreateMode) ttl() bool { return m == PersistentWithTTL || m == PersistentSequentialWithTTL }

// ClientInfo is one identity of a session (WhoAmI).
type ClientInfo struct {
	AuthScheme string
	User       string
}

// wrap attaches the call's operation and path to an error; context
// errors pass through unchanged.
func (cl *call) wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &Error{Op: cl.name, Path: cl.path, Err: err}
}

// syncCall runs cl and returns res() on success.
func syncCall[T any](ctx context.Context, c *Client, cl *call, res func() T) (T, error) {
	if err := c.do(ctx, cl); err != nil {
		var zero T
		return zero, cl.wrap(err)
	}
	return res(), nil
}

// asyncCall queues cl; cb gets res() or the error on the dispatcher.
func asyncCall[T any](ctx context.Context, c *Client, cl *call, res func() T, cb func(T, error)) error {
	cl.async = func() {
		if cl.err != nil {
			var zero T
			cb(zero, cl.wrap(cl.err))
			return
		}
		cb(res(), nil)
	}
	return cl.wrap(c.submit(ctx, cl))
}

// validPath checks a client path and returns the server's.
func (c *Client) validPath(op, p string, sequential bool) (string, error) {
	if err := validatePath(p, sequential); err != nil {
		return "", &Error{Op: op, Path: p, Err: err}
	}
	return c.serverPath(p), nil
}

// --- create -----------------------------------------------------------------

type created struct {
	path string
	stat Stat
}

func (c *Client) createOp(path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) (*call, func() created, error) {
	name := "create"
	sp, err := c.validPath(name, path, mode.sequential())
	if err != nil {
		return nil, nil, err
	}
	if len(acl) == 0 { // as the Java client, which refuses it before sending
		return nil, nil, &Error{Op: name, Path: path, Err: ErrInvalidACL}
	}
	if mode < Persistent || mode > PersistentSequentialWithTTL || mode.ttl() != (ttl != 0) {
		return nil, nil, &Error{Op: name, Path: path, Err: fmt.Errorf("%w: mode %d with TTL %v", ErrBadArguments, mode, ttl)}
	}
	var (
		op   = jute.OpCreate2
		body jute.Record
	)
	switch {
	case mode.ttl():
		op = jute.OpCreateTTL
		body = &jute.CreateTTLRequest{Path: sp, Data: data, ACL: toJuteACL(acl), Flags: int32(mode), TTL: ttl.Milliseconds()}
	case mode == Container:
		op = jute.OpCreateContainer
		body = &jute.CreateRequest{Path: sp, Data: data, ACL: toJuteACL(acl), Flags: int32(mode)}
	default:
		body = &jute.CreateRequest{Path: sp, Data: data, ACL: toJuteACL(acl), Flags: int32(mode)}
	}
	var resp jute.Create2Response
	cl, err := c.newCall(op, name, path, body, &resp)
	if err != nil {
		return nil, nil, err
	}
	return cl, func() created { return created{c.clientPath(resp.Path), fromJuteStat(&resp.Stat)} }, nil
}

// Create makes a node with data and acl and returns its path (with the
// sequence suffix of a sequential mode) and its Stat. For the TTL modes
// use CreateTTL.
func (c *Client) Create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL) (string, Stat, error) {
	cl, res, err := c.createOp(path, data, mode, acl, 0)
	if err != nil {
		return "", Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.path, r.stat, err
}

// CreateAsync is Create, completed by cb.
func (c *Client) CreateAsync(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, cb func(path string, st Stat, err error)) error {
	cl, res, err := c.createOp(path, data, mode, acl, 0)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r created, err error) { cb(r.path, r.stat, err) })
}

// CreateTTL makes a node of mode PersistentWithTTL or
// PersistentSequentialWithTTL, which the server deletes once it has gone
// ttl without a change and without children. The server must have
// extended types enabled (extendedTypesEnabled=true), else the call fails
// with ErrUnimplemented.
func (c *Client) CreateTTL(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) (string, Stat, error) {
	cl, res, err := c.createOp(path, data, mode, acl, ttl)
	if err != nil {
		return "", Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.path, r.stat, err
}

// CreateTTLAsync is CreateTTL, completed by cb.
func (c *Client) CreateTTLAsync(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration, cb func(path string, st Stat, err error)) error {
	cl, res, err := c.createOp(path, data, mode, acl, ttl)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r created, err error) { cb(r.path, r.stat, err) })
}

// --- delete, set ------------------------------------------------------------

func (c *Client) deleteOp(path string, version int32) (*call, func() struct{}, error) {
	sp, err := c.validPath("delete", path, false)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.newCall(jute.OpDelete, "delete", path, &jute.PathVersion{Path: sp, Version: version}, nil)
	return cl, func() struct{} { return struct{}{} }, err
}

// Delete deletes the node if its version is version (-1 matches any).
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	cl, res, err := c.deleteOp(path, version)
	if err != nil {
		return err
	}
	_, err = syncCall(ctx, c, cl, res)
	return err
}

// DeleteAsync is Delete, completed by cb.
func (c *Client) DeleteAsync(ctx context.Context, path string, version int32, cb func(err error)) error {
	cl, res, err := c.deleteOp(path, version)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(_ struct{}, err error) { cb(err) })
}

func (c *Client) setOp(path string, data []byte, version int32) (*call, func() Stat, error) {
	sp, err := c.validPath("setData", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.StatResponse
	cl, err := c.newCall(jute.OpSetData, "setData", path, &jute.SetDataRequest{Path: sp, Data: data, Version: version}, &resp)
	return cl, func() Stat { return fromJuteStat(&resp.Stat) }, err
}

// Set replaces the node's data if its version is version (-1 matches any)
// and returns its new Stat.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	cl, res, err := c.setOp(path, data, version)
	if err != nil {
		return Stat{}, err
	}
	return syncCall(ctx, c, cl, res)
}

// SetAsync is Set, completed by cb.
func (c *Client) SetAsync(ctx context.Context, path string, data []byte, version int32, cb func(st Stat, err error)) error {
	cl, res, err := c.setOp(path, data, version)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

// --- reads and their watches ------------------------------------------------

// watchOnReply returns an onReply hook that registers a one-time watch
// when the reply succeeds (or, for exists, says NoNode), and the channel.
// A watch of an abandoned call is not registered: nobody would read it.
func (c *Client) watchOnReply(serverPath string, k kind, onNoNode bool, missing *bool) (func(error, bool) error, chan Event) {
	ch := make(chan Event, 1)
	return func(err error, claimed bool) error {
		reg := k
		if onNoNode && errors.Is(err, ErrNoNode) {
			*missing, err, reg = true, nil, kindExist
		}
		if err == nil && claimed {
			c.watches.add(&watch{kind: reg, path: serverPath, ch: ch})
		}
		return err
	}, ch
}

type existence struct {
	ok   bool
	stat Stat
	ch   <-chan Event
}

func (c *Client) existsOp(path string, w bool) (*call, func() existence, error) {
	sp, err := c.validPath("exists", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.StatResponse
	cl, err := c.newCall(jute.OpExists, "exists", path, &jute.PathWatch{Path: sp, Watch: w && !c.watches.covers(sp, kindData)}, &resp)
	if err != nil {
		return nil, nil, err
	}
	var missing bool
	var ch chan Event
	if w {
		cl.onReply, ch = c.watchOnReply(sp, kindData, true, &missing)
	} else {
		cl.onReply = func(err error, _ bool) error {
			if errors.Is(err, ErrNoNode) {
				missing, err = true, nil
			}
			return err
		}
	}
	return cl, func() existence {
		if missing {
			return existence{ch: ch}
		}
		return existence{true, fromJuteStat(&resp.Stat), ch}
	}, nil
}

// Exists reports whether the node exists, and its Stat if it does.
func (c *Client) Exists(ctx context.Context, path string) (bool, Stat, error) {
	cl, res, err := c.existsOp(path, false)
	if err != nil {
		return false, Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.ok, r.stat, err
}

// ExistsW is Exists with a one-time watch, set whether or not the node
// exists: the channel gets the node's next creation, deletion or data
// change, and is then closed.
func (c *Client) ExistsW(ctx context.Context, path string) (bool, Stat, <-chan Event, error) {
	cl, res, err := c.existsOp(path, true)
	if err != nil {
		return false, Stat{}, nil, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.ok, r.stat, r.ch, err
}

// ExistsAsync is Exists, completed by cb.
func (c *Client) ExistsAsync(ctx context.Context, path string, cb func(ok bool, st Stat, err error)) error {
	cl, res, err := c.existsOp(path, false)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r existence, err error) { cb(r.ok, r.stat, err) })
}

// ExistsWAsync is ExistsW, completed by cb.
func (c *Client) ExistsWAsync(ctx context.Context, path string, cb func(ok bool, st Stat, ch <-chan Event, err error)) error {
	cl, res, err := c.existsOp(path, true)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r existence, err error) { cb(r.ok, r.stat, r.ch, err) })
}

type dataResult struct {
	data []byte
	stat Stat
	ch   <-chan Event
}

func (c *Client) getOp(path string, w bool) (*call, func() dataResult, error) {
	sp, err := c.validPath("getData", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.GetDataResponse
	cl, err := c.newCall(jute.OpGetData, "getData", path, &jute.PathWatch{Path: sp, Watch: w && !c.watches.covers(sp, kindData)}, &resp)
	if err != nil {
		return nil, nil, err
	}
	var ch chan Event
	if w {
		cl.onReply, ch = c.watchOnReply(sp, kindData, false, nil)
	}
	return cl, func() dataResult { return dataResult{resp.Data, fromJuteStat(&resp.Stat), ch} }, nil
}

// Get returns the node's data and Stat.
func (c *Client) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	cl, res, err := c.getOp(path, false)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.data, r.stat, err
}

// GetW is Get with a one-time watch: the channel gets the node's next
// data change or deletion, and is then closed. No watch is set if the
// call fails (a missing node: use ExistsW).
func (c *Client) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan Event, error) {
	cl, res, err := c.getOp(path, true)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.data, r.stat, r.ch, err
}

// GetAsync is Get, completed by cb.
func (c *Client) GetAsync(ctx context.Context, path string, cb func(data []byte, st Stat, err error)) error {
	cl, res, err := c.getOp(path, false)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r dataResult, err error) { cb(r.data, r.stat, err) })
}

// GetWAsync is GetW, completed by cb.
func (c *Client) GetWAsync(ctx context.Context, path string, cb func(data []byte, st Stat, ch <-chan Event, err error)) error {
	cl, res, err := c.getOp(path, true)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r dataResult, err error) { cb(r.data, r.stat, r.ch, err) })
}

type childrenResult struct {
	children []string
	stat     Stat
	ch       <-chan Event
}

func (c *Client) childrenOp(path string, w bool) (*call, func() childrenResult, error) {
	sp, err := c.validPath("getChildren", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.GetChildren2Response
	cl, err := c.newCall(jute.OpGetChildren2, "getChildren", path, &jute.PathWatch{Path: sp, Watch: w && !c.watches.covers(sp, kindChild)}, &resp)
	if err != nil {
		return nil, nil, err
	}
	var ch chan Event
	if w {
		cl.onReply, ch = c.watchOnReply(sp, kindChild, false, nil)
	}
	return cl, func() childrenResult { return childrenResult{resp.Children, fromJuteStat(&resp.Stat), ch} }, nil
}

// Children returns the names of the node's children, in no particular
// order, and the node's Stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, Stat, error) {
	cl, res, err := c.childrenOp(path, false)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.children, r.stat, err
}

// ChildrenW is Children with a one-time watch: the channel gets the next
// change to the list of children (NodeChildrenChanged) or the node's
// deletion, and is then closed.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, Stat, <-chan Event, error) {
	cl, res, err := c.childrenOp(path, true)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.children, r.stat, r.ch, err
}

// ChildrenAsync is Children, completed by cb.
func (c *Client) ChildrenAsync(ctx context.Context, path string, cb func(children []string, st Stat, err error)) error {
	cl, res, err := c.childrenOp(path, false)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r childrenResult, err error) { cb(r.children, r.stat, err) })
}

// ChildrenWAsync is ChildrenW, completed by cb.
func (c *Client) ChildrenWAsync(ctx context.Context, path string, cb func(children []string, st Stat, ch <-chan Event, err error)) error {
	cl, res, err := c.childrenOp(path, true)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r childrenResult, err error) { cb(r.children, r.stat, r.ch, err) })
}

// --- ACLs -------------------------------------------------------------------

type aclResult struct {
	acl  []ACL
	stat Stat
}

func (c *Client) getACLOp(path string) (*call, func() aclResult, error) {
	sp, err := c.validPath("getACL", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.GetACLResponse
	cl, err := c.newCall(jute.OpGetACL, "getACL", path, &jute.PathRequest{Path: sp}, &resp)
	return cl, func() aclResult { return aclResult{fromJuteACL(resp.ACL), fromJuteStat(&resp.Stat)} }, err
}

// GetACL returns the node's ACL and Stat.
func (c *Client) GetACL(ctx context.Context, path string) ([]ACL, Stat, error) {
	cl, res, err := c.getACLOp(path)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.acl, r.stat, err
}

// GetACLAsync is GetACL, completed by cb.
func (c *Client) GetACLAsync(ctx context.Context, path string, cb func(acl []ACL, st Stat, err error)) error {
	cl, res, err := c.getACLOp(path)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r aclResult, err error) { cb(r.acl, r.stat, err) })
}

func (c *Client) setACLOp(path string, acl []ACL, version int32) (*call, func() Stat, error) {
	sp, err := c.validPath("setACL", path, false)
	if err != nil {
		return nil, nil, err
	}
	if len(acl) == 0 {
		return nil, nil, &Error{Op: "setACL", Path: path, Err: ErrInvalidACL}
	}
	var resp jute.StatResponse
	cl, err := c.newCall(jute.OpSetACL, "setACL", path, &jute.SetACLRequest{Path: sp, ACL: toJuteACL(acl), Version: version}, &resp)
	return cl, func() Stat { return fromJuteStat(&resp.Stat) }, err
}

// SetACL replaces the node's ACL if its ACL version (Stat.Aversion) is
// version (-1 matches any) and returns its new Stat.
func (c *Client) SetACL(ctx context.Context, path string, acl []ACL, version int32) (Stat, error) {
	cl, res, err := c.setACLOp(path, acl, version)
	if err != nil {
		return Stat{}, err
	}
	return syncCall(ctx, c, cl, res)
}

// SetACLAsync is SetACL, completed by cb.
func (c *Client) SetACLAsync(ctx context.Context, path string, acl []ACL, version int32, cb func(st Stat, err error)) error {
	cl, res, err := c.setACLOp(path, acl, version)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

// --- sync, auth, session queries -------------------------------------------

func (c *Client) syncOp(path string) (*call, func() struct{}, error) {
	sp, err := c.validPath("sync", path, false)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.newCall(jute.OpSync, "sync", path, &jute.PathRequest{Path: sp}, &jute.PathRequest{})
	return cl, func() struct{} { return struct{}{} }, err
}

// Sync waits until the server the client is connected to has applied
// every write that the leader had committed when Sync was called, so that
// a read after it is not stale (a "slow read", paper section 2.3).
func (c *Client) Sync(ctx context.Context, path string) error {
	cl, res, err := c.syncOp(path)
	if err != nil {
		return err
	}
	_, err = syncCall(ctx, c, cl, res)
	return err
}

// SyncAsync is Sync, completed by cb.
func (c *Client) SyncAsync(ctx context.Context, path string, cb func(err error)) error {
	cl, res, err := c.syncOp(path)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(_ struct{}, err error) { cb(err) })
}

func (c *Client) addAuthOp(scheme string, auth []byte) (*call, func() struct{}, error) {
	cl := c.authCall(authInfo{scheme, append([]byte(nil), auth...)})
	if len(cl.frame)-4 > c.cfg.maxFrame {
		return nil, nil, &Error{Op: "auth", Err: ErrRequestTooLarge}
	}
	// Remembered once queued, as the Java client does: a connection that
	// breaks before the reply still passes the credentials on.
	cl.accepted = func() { c.auth = append(c.auth, authInfo{scheme, append([]byte(nil), auth...)}) }
	return cl, func() struct{} { return struct{}{} }, nil
}

// AddAuth adds credentials to the session, in a scheme the server knows
// ("digest" takes "user:password"). They are sent again on every later
// connection. A server that rejects them ends the session with
// StateAuthFailed, and AddAuth returns ErrAuthFailed.
func (c *Client) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	cl, res, err := c.addAuthOp(scheme, auth)
	if err != nil {
		return err
	}
	_, err = syncCall(ctx, c, cl, res)
	return err
}

// AddAuthAsync is AddAuth, completed by cb.
func (c *Client) AddAuthAsync(ctx context.Context, scheme string, auth []byte, cb func(err error)) error {
	cl, res, err := c.addAuthOp(scheme, auth)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(_ struct{}, err error) { cb(err) })
}

func (c *Client) ephemeralsOp(prefix string) (*call, func() []string, error) {
	sp, err := c.validPath("getEphemerals", prefix, false)
	if err != nil {
		return nil, nil, err
	}
	if c.chroot != "" && prefix == "/" {
		sp = c.chroot + "/" // only the nodes under the chroot, not its siblings
	}
	var resp jute.StringsResponse
	cl, err := c.newCall(jute.OpGetEphemerals, "getEphemerals", prefix, &jute.PathRequest{Path: sp}, &resp)
	return cl, func() []string {
		out := make([]string, len(resp.Strings))
		for i, p := range resp.Strings {
			out[i] = c.clientPath(p)
		}
		return out
	}, err
}

// GetEphemerals returns the paths of the session's ephemeral nodes whose
// path starts with prefix ("/" for all). Unlike the Java client, it
// applies the chroot.
func (c *Client) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	cl, res, err := c.ephemeralsOp(prefix)
	if err != nil {
		return nil, err
	}
	return syncCall(ctx, c, cl, res)
}

// GetEphemeralsAsync is GetEphemerals, completed by cb.
func (c *Client) GetEphemeralsAsync(ctx context.Context, prefix string, cb func(paths []string, err error)) error {
	cl, res, err := c.ephemeralsOp(prefix)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

func (c *Client) countOp(path string) (*call, func() int, error) {
	sp, err := c.validPath("getAllChildrenNumber", path, false)
	if err != nil {
		return nil, nil, err
	}
	var resp jute.CountResponse
	cl, err := c.newCall(jute.OpGetAllChildrenNumber, "getAllChildrenNumber", path, &jute.PathRequest{Path: sp}, &resp)
	return cl, func() int { return int(resp.TotalNumber) }, err
}

// GetAllChildrenNumber returns the number of nodes below path, at any depth.
func (c *Client) GetAllChildrenNumber(ctx context.Context, path string) (int, error) {
	cl, res, err := c.countOp(path)
	if err != nil {
		return 0, err
	}
	return syncCall(ctx, c, cl, res)
}

// GetAllChildrenNumberAsync is GetAllChildrenNumber, completed by cb.
func (c *Client) GetAllChildrenNumberAsync(ctx context.Context, path string, cb func(n int, err error)) error {
	cl, res, err := c.countOp(path)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

func (c *Client) whoAmIOp() (*call, func() []ClientInfo, error) {
	var resp jute.WhoAmIResponse
	cl, err := c.newCall(jute.OpWhoAmI, "whoAmI", "", nil, &resp)
	return cl, func() []ClientInfo {
		out := make([]ClientInfo, len(resp.ClientInfo))
		for i, ci := range resp.ClientInfo {
			out[i] = ClientInfo{AuthScheme: ci.AuthScheme, User: ci.User}
		}
		return out
	}, err
}

// WhoAmI returns the identities the server has for the session.
func (c *Client) WhoAmI(ctx context.Context) ([]ClientInfo, error) {
	cl, res, err := c.whoAmIOp()
	if err != nil {
		return nil, err
	}
	return syncCall(ctx, c, cl, res)
}

// WhoAmIAsync is WhoAmI, completed by cb.
func (c *Client) WhoAmIAsync(ctx context.Context, cb func(ids []ClientInfo, err error)) error {
	cl, res, err := c.whoAmIOp()
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

func (c *Client) reconfigOp(joining, leaving, newMembers string, fromConfig int64) (*call, func() dataResult, error) {
	var resp jute.GetDataResponse
	body := &jute.ReconfigRequest{JoiningServers: joining, LeavingServers: leaving, NewMembers: newMembers, CurConfigID: fromConfig}
	cl, err := c.newCall(jute.OpReconfig, "reconfig", "", body, &resp)
	return cl, func() dataResult { return dataResult{data: resp.Data, stat: fromJuteStat(&resp.Stat)} }, err
}

// Reconfig changes the ensemble's membership (dynamic reconfiguration):
// joining and leaving are comma-separated server specs or ids for an
// incremental change, newMembers the whole new membership for a bulk one
// (leave the others empty). fromConfig is the config version the change
// is based on, or -1. It returns the new configuration and the Stat of
// /zookeeper/config.
func (c *Client) Reconfig(ctx context.Context, joining, leaving, newMembers string, fromConfig int64) ([]byte, Stat, error) {
	cl, res, err := c.reconfigOp(joining, leaving, newMembers, fromConfig)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := syncCall(ctx, c, cl, res)
	return r.data, r.stat, err
}

// ReconfigAsync is Reconfig, completed by cb.
func (c *Client) ReconfigAsync(ctx context.Context, joining, leaving, newMembers string, fromConfig int64, cb func(config []byte, st Stat, err error)) error {
	cl, res, err := c.reconfigOp(joining, leaving, newMembers, fromConfig)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(r dataResult, err error) { cb(r.data, r.stat, err) })
}

// --- persistent watches and watch removal ------------------------------------

func (c *Client) addWatchOp(path string, mode WatchMode) (*call, func() <-chan Event, error) {
	sp, err := c.validPath("addWatch", path, false)
	if err != nil {
		return nil, nil, err
	}
	k := kindPersistent
	switch mode {
	case WatchPersistent:
	case WatchPersistentRecursive:
		k = kindRecursive
	default:
		return nil, nil, &Error{Op: "addWatch", Path: path, Err: fmt.Errorf("%w: watch mode %d", ErrBadArguments, mode)}
	}
	cl, err := c.newCall(jute.OpAddWatch, "addWatch", path, &jute.AddWatchRequest{Path: sp, Mode: int32(mode)}, nil)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan Event, c.cfg.watchBuffer)
	cl.onReply = func(err error, claimed bool) error {
		if err == nil && claimed {
			c.watches.add(&watch{kind: k, path: sp, ch: ch})
		}
		return err
	}
	return cl, func() <-chan Event { return ch }, nil
}

// AddWatch sets a persistent watch on path, which stays until removed
// (RemoveWatch, RemoveWatches) or the session ends, and returns its
// channel. The channel holds up to WithWatchBuffer events; a consumer that
// falls further behind loses the watch, which ends with ErrWatchOverflow.
// The channel is closed when the watch ends.
//
// One-time watches (GetW, ExistsW, ChildrenW) on a path a persistent
// watch already covers are kept by the client alone and fired by the
// persistent watch's events: on Apache 3.8 a one-time watch set on the
// server would replace the persistent one there (ZOOKEEPER-4466).
func (c *Client) AddWatch(ctx context.Context, path string, mode WatchMode) (<-chan Event, error) {
	cl, res, err := c.addWatchOp(path, mode)
	if err != nil {
		return nil, err
	}
	return syncCall(ctx, c, cl, res)
}

// AddWatchAsync is AddWatch, completed by cb.
func (c *Client) AddWatchAsync(ctx context.Context, path string, mode WatchMode, cb func(ch <-chan Event, err error)) error {
	cl, res, err := c.addWatchOp(path, mode)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}

func (c *Client) removeWatchesOp(path string, t WatcherType) (*call, func() struct{}, error) {
	sp, err := c.validPath("removeWatches", path, false)
	if err != nil {
		return nil, nil, err
	}
	if t != WatcherChildren && t != WatcherData && t != WatcherAny {
		return nil, nil, &Error{Op: "removeWatches", Path: path, Err: fmt.Errorf("%w: watcher type %d", ErrBadArguments, t)}
	}
	if !c.watches.has(sp, t) {
		return nil, nil, &Error{Op: "removeWatches", Path: path, Err: ErrNoWatcher}
	}
	// Under a persistent watch, one-time watches live in the client only:
	// ask the server to check, not to remove, so that the persistent
	// watch stays.
	local := t != WatcherAny && c.watches.pinned(sp)
	cl, err := c.removeCall(path, sp, t, local)
	return cl, func() struct{} { return struct{}{} }, err
}

// removeCall asks the server to remove the watches of type t on sp (or
// only to check for them, if local), and removes the client's own when the
// reply comes: in order with events, so an event that beat the removal is
// still delivered. Every local watch of that type on the path goes, as it
// has on the server.
func (c *Client) removeCall(path, sp string, t WatcherType, local bool) (*call, error) {
	op := jute.OpRemoveWatches
	if local {
		op = jute.OpCheckWatches
	}
	cl, err := c.newCall(op, "removeWatches", path, &jute.WatchTypeRequest{Path: sp, Type: int32(t)}, nil)
	if err != nil {
		return nil, err
	}
	cl.onReply = func(err error, _ bool) error {
		if err != nil && !errors.Is(err, ErrNoWatcher) {
			return err
		}
		// On NoWatcher the server had none: ours could never fire, so
		// they go too.
		if !c.watches.removeMatching(sp, t) {
			return ErrNoWatcher
		}
		return nil
	}
	return cl, nil
}

// RemoveWatches removes every watch of type t that the client has on path;
// each ends with its WatchRemoved event. It fails with ErrNoWatcher if
// there is none.
func (c *Client) RemoveWatches(ctx context.Context, path string, t WatcherType) error {
	cl, res, err := c.removeWatchesOp(path, t)
	if err != nil {
		return err
	}
	_, err = syncCall(ctx, c, cl, res)
	return err
}

// RemoveWatchesAsync is RemoveWatches, completed by cb.
func (c *Client) RemoveWatchesAsync(ctx context.Context, path string, t WatcherType, cb func(err error)) error {
	cl, res, err := c.removeWatchesOp(path, t)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, func(_ struct{}, err error) { cb(err) })
}

// RemoveWatch removes the one watch whose channel is ch; it ends with its
// WatchRemoved event. If the server-side removal would also remove another
// of the client's watches (the protocol removes by path and type, not by
// watch), the watch is only dropped by the client, and the server's
// notifications for it are ignored. It fails with ErrNoWatcher if the
// watch has already ended.
func (c *Client) RemoveWatch(ctx context.Context, ch <-chan Event) error {
	w, t, shared := c.watches.lookup(ch)
	if w == nil {
		return &Error{Op: "removeWatches", Err: ErrNoWatcher}
	}
	path := c.clientPath(w.path)
	if shared {
		if !c.watches.remove(w) {
			return &Error{Op: "removeWatches", Path: path, Err: ErrNoWatcher}
		}
		return nil
	}
	cl, err := c.removeCall(path, w.path, t, false)
	if err != nil {
		return err
	}
	_, err = syncCall(ctx, c, cl, func() struct{} { return struct{}{} })
	return err
}
