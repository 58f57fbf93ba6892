package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// The keys the linearizability check covers; other paths are for the
// rest of the op mix.
const nKeys = 3

func keyPath(k int) string { return fmt.Sprintf("/k%d", k) }

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// opKind is a client operation.
type opKind byte

const (
	opConnect     opKind = 'C' // createSession
	opMove        opKind = 'M' // setOwner: the session reattaches here
	opCreate      opKind = 'c' // create a key
	opSet         opKind = 's' // setData of a key, with a version or -1
	opDelete      opKind = 'd' // delete a key, with a version or -1
	opMulti       opKind = 'm' // multi: check key version, setData key2
	opSyncRead    opKind = 'r' // sync, then getData of a key
	opRead        opKind = 'g' // getData (with a watch) without sync
	opExists      opKind = 'x' // exists with a watch: set on a missing node too
	opCreateEph   opKind = 'e' // an ephemeral node
	opCreateSeq   opKind = 'q' // a persistent sequential node
	opContainer   opKind = 'n' // a container with a child, then the child deleted
	opCreateTTL   opKind = 't' // a TTL node
	opGetChildren opKind = 'l' // getChildren
	opClose       opKind = 'X' // closeSession
	opReconfig    opKind = 'R' // reconfig: data joins, data2 leaves
	opSetWatches  opKind = 'W' // setWatches2 after a reconnect, behind the handshake
	// The directory /d, with children /d/c0../d/c2 and grandchildren
	// /d/cN/g, for child and persistent watches to follow.
	opDirCreate     opKind = 'a' // create a node under /d (or /d)
	opDirSet        opKind = 'b' // setData of one
	opDirDelete     opKind = 'z' // delete one
	opAddWatch      opKind = 'w' // addWatch: mode persistent or persistent-recursive
	opRemoveWatches opKind = 'v' // removeWatches of a kind (mode)
	opCheckWatches  opKind = 'h' // checkWatches of a kind (mode)
)

// kvInput is an operation as the linearizability model sees it.
type kvInput struct {
	op      opKind
	key     int
	data    string
	version int32
	key2    int
	data2   string
	path    string
	watch   bool
	// mode: addWatch's mode, check/removeWatches' watcher type; for
	// getChildren, 2 asks getChildren2.
	mode int32
	who  identity // the client's: the model's ACL checks depend on it
}

func (in kvInput) String() string {
	if in.who != idSuper {
		return in.describe() + " as " + in.who.String()
	}
	return in.describe()
}

func (in kvInput) describe() string {
	switch in.op {
	case opCreate:
		return fmt.Sprintf("create %s %q", keyPath(in.key), in.data)
	case opSet:
		return fmt.Sprintf("set %s %q v%d", keyPath(in.key), in.data, in.version)
	case opDelete:
		return fmt.Sprintf("delete %s v%d", keyPath(in.key), in.version)
	case opMulti:
		return fmt.Sprintf("multi(check %s v%d, set %s %q)", keyPath(in.key), in.version, keyPath(in.key2), in.data2)
	case opSyncRead:
		return fmt.Sprintf("sync+get %s", keyPath(in.key))
	case opRead:
		return fmt.Sprintf("get %s watch=%v", keyPath(in.key), in.watch)
	case opExists:
		return fmt.Sprintf("exists %s watch", keyPath(in.key))
	case opGetChildren:
		return fmt.Sprintf("getChildren%s %s watch=%v", map[bool]string{true: "2"}[in.mode == 2], in.path, in.watch)
	case opAddWatch:
		return fmt.Sprintf("addWatch %s %s", in.path, map[bool]string{true: "recursive"}[in.mode == jute.AddWatchPersistentRecursive])
	case opRemoveWatches, opCheckWatches:
		return fmt.Sprintf("%c %s type %d", in.op, in.path, in.mode)
	}
	return fmt.Sprintf("%c %s", in.op, in.path)
}

// kvOutput is an operation's outcome.
type kvOutput struct {
	unknown bool // connection lost: it may or may not have happened
	code    jute.Code
	exists  bool
	data    string
	version int32
}

func (o kvOutput) String() string {
	if o.unknown {
		return "unknown"
	}
	if o.code != jute.OK {
		return o.code.String()
	}
	if o.exists {
		return fmt.Sprintf("%q v%d", o.data, o.version)
	}
	if o.data != "" {
		return fmt.Sprintf("OK %q v%d", o.data, o.version)
	}
	return fmt.Sprintf("OK v%d", o.version)
}

// call is a request in flight.
type call struct {
	cl    *client
	conn  *conn
	in    kvInput
	cxid  int32 // the xid of its (first) frame
	start int64 // logical call time
	zxid  int64 // the client's last zxid when it was sent
	// synced: a sync+read's sync was answered; its getData (xid cxid+1)
	// is next.
	synced bool
	// A setWatches' re-registered watches (rel is its relative zxid),
	// and the events that came before its reply: the ones owed for
	// changes the client missed while it was away.
	rewatch map[wkey]armedWatch
	rel     int64
	owed    []watch.Event
}

// conn is a client's connection to a member: FIFO both ways, with a
// small delay. Its member side is a server.Endpoint: the request path
// (server.Core) sends it jute frames, which the client decodes.
type conn struct {
	id      uint64
	m       *member
	cl      *client
	session int64
	closed  bool
	// handshake: the next frame to the client is a ConnectResponse.
	handshake bool
	toM       int64 // when the last message to the member arrives
	toC       int64 // when the last message to the client arrives
	// The client's watch model on this connection: cursor indexes the
	// member's trigLog at the first trigger not yet walked; watching says
	// the client's watches are registered here (after its setWatches).
	cursor   int
	watching bool
}

var _ server.Endpoint = (*conn)(nil)

// ID implements server.Endpoint.
func (c *conn) ID() uint64 { return c.id }

// SessionID implements server.Endpoint.
func (c *conn) SessionID() int64 { return c.session }

// AuthIDs implements server.Endpoint: the client's identity (auth.go).
func (c *conn) AuthIDs() []jute.Id { return identities[c.cl.who] }

// Send implements server.Endpoint: the frame reaches the client in
// order. A watch event is stamped with the zxid being applied.
func (c *conn) Send(frame []byte) {
	zxid := c.m.applying
	c.toClient(func() { c.cl.onFrame(c, frame, zxid) })
}

// Finish implements server.Endpoint.
func (c *conn) Finish(frame []byte) {
	if frame != nil {
		c.Send(frame)
	}
	c.finish()
}

// Close implements server.Endpoint.
func (c *conn) Close() { c.close() }

// Replied implements server.Endpoint; the simulator keeps no statistics.
func (c *conn) Replied(int32, int64, time.Time, time.Time) {}

// toMember sends f to the member's side, in order.
func (c *conn) toMember(f func()) {
	s := c.m.s
	c.toM = max(c.toM, s.now+s.between(0, 2))
	s.after(c.toM-s.now, func() {
		if !c.closed && c.m.up {
			if c.m.paused() {
				c.m.hold(func() {
					if !c.closed && c.m.up {
						f()
					}
				})
				return
			}
			f()
		}
	})
}

// toClient sends f to the client's side, in order.
func (c *conn) toClient(f func()) {
	s := c.m.s
	c.toC = max(c.toC, s.now+s.between(0, 2))
	s.after(c.toC-s.now, func() {
		if !c.closed {
			f()
		}
	})
}

// close breaks the connection: the client sees ConnectionLoss.
func (c *conn) close() {
	if c.closed {
		return
	}
	c.closed = true
	delete(c.m.conns, c.id)
	if c.session != 0 && c.m.bySess[c.session] == c {
		delete(c.m.bySess, c.session)
	}
	if c.m.srv != nil {
		c.m.srv.Closed(c) // fails the reads waiting on it, drops its watches
	}
	cl := c.cl
	c.m.s.after(1, func() { cl.onClose(c) })
}

// finish closes the connection after what is queued for the client.
func (c *conn) finish() {
	c.toClient(func() { c.close() })
}

// client is a simulated ZooKeeper client: one session at a time, on one
// member at a time, with up to maxOutstanding requests pipelined.
type client struct {
	s       *Sim
	id      int
	conn    *conn
	session int64
	passwd  []byte
	timeout int32
	calls   []*call // in flight, in the order sent
	cxid    int32
	maxZxid int64
	// replyZxid is the last zxid a reply brought: a setWatches' relative
	// zxid, as Apache's client keeps it (notifications carry none).
	replyZxid int64
	watches   map[wkey]armedWatch // the watches it holds: they live as long as the session
	written   int
	dead      bool     // the session ended (expired or closed): start a new one
	who       identity // whom it is authenticated as, for good
}

const maxOutstanding = 3

func newClient(s *Sim, id int) *client {
	return &client{s: s, id: id, watches: make(map[wkey]armedWatch), who: clientIdentity(id)}
}

// act is the client's main loop: connect if needed, else send a request.
func (c *client) act() {
	if c.s.stopped {
		return
	}
	defer c.s.after(c.s.between(5, 60), c.act)
	if c.conn == nil {
		c.connect()
		return
	}
	if c.session == 0 || len(c.calls) >= maxOutstanding || c.syncing() {
		return
	}
	// Reads are pipelined behind writes too: the request path's
	// registry holds them until the writes before them are answered.
	if c.s.chance(0.4) {
		c.send(c.pickRead())
		return
	}
	c.send(c.pickWrite())
}

// syncing reports a sync in flight: internal/server reads nothing more of
// the session until it is answered (a sync completes after the writes
// applied with it, so later requests wait for its reply).
func (c *client) syncing() bool {
	return slices.ContainsFunc(c.calls, func(cl *call) bool { return cl.in.op == opSyncRead })
}

func (c *client) pickRead() kvInput {
	k := c.s.rng.IntN(nKeys)
	switch r := c.s.rng.IntN(12); {
	case r < 3:
		return kvInput{op: opRead, key: k, watch: c.s.chance(0.7)}
	case r < 5:
		in := kvInput{op: opGetChildren, path: c.childPath(), watch: c.s.chance(0.7)}
		if c.s.chance(0.5) {
			in.mode = 2
		}
		return in
	case r < 7:
		return kvInput{op: opExists, key: k, watch: true}
	case r < 10:
		return kvInput{op: opSyncRead, key: k}
	case r < 11:
		mode := jute.AddWatchPersistent
		if c.s.chance(0.5) {
			mode = jute.AddWatchPersistentRecursive
		}
		return kvInput{op: opAddWatch, path: c.watchPath(), mode: mode}
	case c.s.chance(0.5):
		return kvInput{op: opRemoveWatches, path: c.watchPath(), mode: jute.WatcherChildren + int32(c.s.rng.IntN(3))}
	}
	return kvInput{op: opCheckWatches, path: c.watchPath(), mode: jute.WatcherChildren + int32(c.s.rng.IntN(3))}
}

// childPath is a node whose children change: the root (every top-level
// create and delete), the directory and its children, a container.
func (c *client) childPath() string {
	switch r := c.s.rng.IntN(8); {
	case r < 2:
		return "/"
	case r < 5:
		return "/d"
	case r < 7:
		return fmt.Sprintf("/d/c%d", c.s.rng.IntN(3))
	}
	return fmt.Sprintf("/box%d", c.s.rng.IntN(2))
}

// watchPath is where a persistent watch goes: a key, or a node whose
// subtree changes (rarely the root: every change of the tree fires a
// recursive watch there).
func (c *client) watchPath() string {
	if c.s.chance(0.3) {
		return keyPath(c.s.rng.IntN(nKeys))
	}
	if c.s.chance(0.1) {
		return "/"
	}
	return c.childPath()
}

// dirPath is a node of the directory: /d, /d/cN or /d/cN/g.
func (c *client) dirPath() string {
	i := c.s.rng.IntN(3)
	switch c.s.rng.IntN(4) {
	case 0:
		return "/d"
	case 1, 2:
		return fmt.Sprintf("/d/c%d", i)
	}
	return fmt.Sprintf("/d/c%d/g", i)
}

func (c *client) pickWrite() kvInput {
	c.written++
	data := fmt.Sprintf("c%d.%d", c.id, c.written)
	k := c.s.rng.IntN(nKeys)
	ver := int32(-1)
	if c.s.chance(0.5) {
		ver = int32(c.s.rng.IntN(4))
	}
	switch r := c.s.rng.IntN(115); {
	case r < 15:
		return kvInput{op: opCreate, key: k, data: data}
	case r < 45:
		return kvInput{op: opSet, key: k, data: data, version: ver}
	case r < 55:
		return kvInput{op: opDelete, key: k, version: ver}
	case r < 65: // one key, so the history partitions by key
		return kvInput{op: opMulti, key: k, version: ver, key2: k, data2: data}
	case r < 75:
		return kvInput{op: opCreateEph, path: fmt.Sprintf("/e%d-%d", c.id, c.written)}
	case r < 83:
		return kvInput{op: opCreateSeq, path: "/seq-"}
	case r < 90:
		return kvInput{op: opContainer, path: fmt.Sprintf("/box%d", c.s.rng.IntN(2))}
	case r < 97:
		return kvInput{op: opCreateTTL, path: fmt.Sprintf("/ttl%d", c.s.rng.IntN(3))}
	}
	if c.s.rng.IntN(6) == 0 {
		return kvInput{op: opClose}
	}
	switch p := c.dirPath(); c.s.rng.IntN(4) {
	case 0, 1:
		return kvInput{op: opDirCreate, path: p, data: data}
	case 2:
		return kvInput{op: opDirSet, path: p, data: data}
	default:
		return kvInput{op: opDirDelete, path: p}
	}
}

// request builds the txn request of a write.
func (c *client) request(in kvInput) txn.Request {
	req := txn.Request{SessionID: c.session, Cxid: c.cxid}
	p := keyPath(in.key)
	switch in.op {
	case opConnect:
		req.Op = jute.OpCreateSession
		req.Record = &txn.CreateSession{TimeoutMs: c.timeout, Password: c.passwd}
	case opMove:
		req.Op = txn.OpSetOwner
	case opCreate:
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(in.data), ACL: keyACL(in.key)}
	case opSet:
		req.Op, req.Record = jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte(in.data), Version: in.version}
	case opDelete:
		req.Op, req.Record = jute.OpDelete, &jute.PathVersion{Path: p, Version: in.version}
	case opMulti:
		req.Op, req.Record = jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Op: jute.OpCheck, Record: &jute.PathVersion{Path: p, Version: in.version}},
			{Op: jute.OpSetData, Record: &jute.SetDataRequest{Path: keyPath(in.key2), Data: []byte(in.data2), Version: -1}},
		}}
	case opSyncRead:
		req.Op, req.Record = jute.OpSync, &jute.PathRequest{Path: p}
	case opCreateEph:
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: in.path, ACL: openACL, Flags: jute.FlagEphemeral}
	case opCreateSeq:
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: in.path, ACL: openACL, Flags: 2}
	case opContainer:
		req.Op, req.Record = jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Op: jute.OpCreateContainer, Record: &jute.CreateRequest{Path: in.path, ACL: openACL, Flags: jute.FlagContainer}},
			{Op: jute.OpCreate, Record: &jute.CreateRequest{Path: in.path + "/x", ACL: openACL}},
			{Op: jute.OpDelete, Record: &jute.PathVersion{Path: in.path + "/x", Version: -1}},
		}}
	case opCreateTTL:
		req.Op, req.Record = jute.OpCreateTTL, &jute.CreateTTLRequest{Path: in.path, ACL: openACL, Flags: jute.FlagPersistentWithTTL, TTL: 300}
	case opClose:
		req.Op = jute.OpCloseSession
	case opReconfig:
		req.Op, req.Record = jute.OpReconfig, &jute.ReconfigRequest{JoiningServers: in.data, LeavingServers: in.data2, CurConfigID: -1}
	case opRead:
		req.Op, req.Record = jute.OpGetData, &jute.PathWatch{Path: p, Watch: in.watch}
	case opExists:
		req.Op, req.Record = jute.OpExists, &jute.PathWatch{Path: p, Watch: in.watch}
	case opGetChildren:
		req.Op, req.Record = jute.OpGetChildren, &jute.PathWatch{Path: in.path, Watch: in.watch}
		if in.mode == 2 {
			req.Op = jute.OpGetChildren2
		}
	case opDirCreate:
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: in.path, Data: []byte(in.data), ACL: openACL}
	case opDirSet:
		req.Op, req.Record = jute.OpSetData, &jute.SetDataRequest{Path: in.path, Data: []byte(in.data), Version: -1}
	case opDirDelete:
		req.Op, req.Record = jute.OpDelete, &jute.PathVersion{Path: in.path, Version: -1}
	case opAddWatch:
		req.Op, req.Record = jute.OpAddWatch, &jute.AddWatchRequest{Path: in.path, Mode: in.mode}
	case opRemoveWatches:
		req.Op, req.Record = jute.OpRemoveWatches, &jute.WatchTypeRequest{Path: in.path, Type: in.mode}
	case opCheckWatches:
		req.Op, req.Record = jute.OpCheckWatches, &jute.WatchTypeRequest{Path: in.path, Type: in.mode}
	}
	return req
}

// connect opens a connection to a random member: it creates a session,
// or moves the one it has there.
func (c *client) connect() {
	m := c.s.members[c.s.rng.IntN(len(c.s.members))]
	if !m.up || !c.s.inConfig[m.id] {
		return // its connect string names the members
	}
	if m.core.LastZxid() < c.maxZxid {
		// A server refuses a client that has seen a newer zxid.
		return
	}
	c.s.connID++
	// What the member applied before the connection fires nothing on it.
	cn := &conn{id: c.s.connID, m: m, cl: c, handshake: true, cursor: len(m.trigLog), watching: true}
	m.conns[cn.id] = cn
	m.srv.Open(cn)
	c.conn = cn
	in := kvInput{op: opMove}
	if c.session == 0 || c.dead {
		c.session = m.ids.Next()
		c.passwd = []byte(fmt.Sprintf("pw%d", c.session))
		c.timeout = int32(c.s.between(300, 900))
		c.dead = false
		clear(c.watches) // they ended with the session
		in = kvInput{op: opConnect}
	}
	c.s.logf("c%d connects to m%d (session %x, %c)", c.id, m.id, c.session, in.op)
	c.sendOn(cn, in)
	if in.op == opMove && len(c.watches) > 0 {
		// As Apache's client primes a connection: its watches go right
		// behind the ConnectRequest, with the last zxid it saw.
		cn.watching = false
		c.sendOn(cn, kvInput{op: opSetWatches})
	}
}

func (c *client) send(in kvInput) { c.sendOn(c.conn, in) }

// sendOn sends a request as internal/server reads it: a handshake's
// session txn goes to server.Core.Connect, as conn.connect sends it; any
// other request is a jute frame for server.Core.Handle. A sync+read is a
// sync and a getData pipelined behind it.
func (c *client) sendOn(cn *conn, in kvInput) {
	c.cxid++
	c.s.stamp++
	in.who = c.who
	cl := &call{cl: c, conn: cn, in: in, cxid: c.cxid, start: c.s.stamp, zxid: c.maxZxid}
	c.calls = append(c.calls, cl)
	c.s.logf("c%d -> m%d #%d %s", c.id, cn.m.id, cl.cxid, in)
	m := cn.m
	var frames [][]byte
	var connect *jute.ConnectResponse
	req := c.request(in)
	switch in.op {
	case opConnect, opMove:
		connect = &jute.ConnectResponse{TimeOut: c.timeout, SessionID: c.session, Passwd: c.passwd}
	case opSyncRead:
		c.cxid++
		frames = append(frames, requestFrame(cl.cxid, req.Op, req.Record),
			requestFrame(c.cxid, jute.OpGetData, &jute.PathWatch{Path: keyPath(in.key)}))
	case opSetWatches:
		frames = append(frames, requestFrame(cl.cxid, jute.OpSetWatches2, c.setWatches(cl)))
	default:
		frames = append(frames, requestFrame(cl.cxid, req.Op, req.Record))
	}
	cn.toMember(func() {
		if c.session != 0 {
			m.touch(c.session)
		}
		if connect != nil {
			// As conn.connect: the connection is the session's before
			// its txn is submitted.
			cn.session = c.session
			if old := m.bySess[c.session]; old != nil && old != cn {
				old.close()
			}
			m.bySess[c.session] = cn
			if err := m.srv.Connect(cn, req, connect); err == nil {
				m.process()
			}
			return
		}
		for _, f := range frames {
			if err := m.srv.Handle(cn, f, time.UnixMilli(m.now())); err != nil {
				cn.close()
				return
			}
			m.process()
		}
	})
}

// requestFrame is a request as a client sends it, without the length
// prefix (conn's reader strips it).
func requestFrame(xid int32, op jute.Op, rec jute.Record) []byte {
	hdr := jute.RequestHeader{Xid: xid, Type: op}
	if rec == nil {
		return jute.AppendFrame(nil, &hdr)[4:]
	}
	return jute.AppendFrame(nil, &hdr, rec)[4:]
}

// onFrame decodes a frame from the member: a ConnectResponse during the
// handshake, else a reply header and its body, or a watch event (xid -1),
// whose zxid is the one the member stamped.
func (c *client) onFrame(cn *conn, frame []byte, eventZxid int64) {
	if cn != c.conn {
		return
	}
	body := frame[4:]
	if cn.handshake {
		cn.handshake = false
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(body, &resp); err != nil {
			c.s.fail("c%d: undecodable ConnectResponse from m%d: %v", c.id, cn.m.id, err)
			return
		}
		out := kvOutput{code: jute.OK}
		if resp.TimeOut == 0 {
			out.code = jute.SessionExpired // refused: the session is gone
		}
		if len(c.calls) > 0 {
			// A ConnectResponse carries no zxid.
			c.onReply(cn, c.calls[0], out, c.maxZxid)
		}
		return
	}
	r := jute.NewReader(body)
	var h jute.ReplyHeader
	h.Decode(r)
	if r.Err() != nil {
		c.s.fail("c%d: undecodable reply header from m%d: %v", c.id, cn.m.id, r.Err())
		return
	}
	rest := body[r.Offset():]
	if h.Xid == jute.XidNotification {
		var ev jute.WatcherEvent
		if err := jute.Unmarshal(rest, &ev); err != nil {
			c.s.fail("c%d: undecodable watch event from m%d: %v", c.id, cn.m.id, err)
			return
		}
		c.onEvent(cn, watch.Event{Type: ev.Type, Path: ev.Path, Zxid: eventZxid})
		return
	}
	if len(c.calls) == 0 {
		c.s.fail("FIFO: c%d got a reply to xid %d with nothing in flight", c.id, h.Xid)
		return
	}
	cl := c.calls[0]
	want := cl.cxid
	if cl.in.op == opSyncRead && cl.synced {
		want++
	}
	if h.Xid != want {
		c.s.fail("FIFO: c%d got the reply to xid %d before xid %d (%s)", c.id, h.Xid, want, cl.in)
		return
	}
	if cl.in.op == opSyncRead && !cl.synced {
		cl.synced = true
		if h.Err != jute.OK {
			c.s.fail("c%d: sync of %s failed with %v", c.id, keyPath(cl.in.key), h.Err)
		}
		if h.Zxid < c.maxZxid {
			c.s.fail("zxid went back: c%d saw %d after %d (sync on m%d)", c.id, h.Zxid, c.maxZxid, cn.m.id)
		}
		c.checkDelivered(cn, h.Zxid, "the reply to a sync")
		c.maxZxid = max(c.maxZxid, h.Zxid)
		c.replyZxid = max(c.replyZxid, h.Zxid)
		return
	}
	out, err := decodeOutput(cl.in.op, cl.in.mode, h.Err, rest)
	if err != nil {
		c.s.fail("c%d: undecodable reply to #%d (%s) from m%d: %v", c.id, cl.cxid, cl.in, cn.m.id, err)
	}
	c.onReply(cn, cl, out, h.Zxid)
}

// decodeOutput decodes a reply's body into what the checks compare.
func decodeOutput(op opKind, mode int32, code jute.Code, body []byte) (kvOutput, error) {
	out := kvOutput{code: code}
	if code != jute.OK {
		return out, nil
	}
	var err error
	switch op {
	case opSet:
		var r jute.StatResponse
		err = jute.Unmarshal(body, &r)
		out.version = r.Stat.Version
	case opCreateSeq:
		var r jute.CreateResponse
		err = jute.Unmarshal(body, &r)
		out.data = r.Path
	case opMulti:
		var r jute.MultiResponse
		err = jute.Unmarshal(body, &r)
		for _, res := range r.Results {
			if res.Err != jute.OK {
				out.code = res.Err
				break
			}
		}
	case opRead, opSyncRead:
		var r jute.GetDataResponse
		err = jute.Unmarshal(body, &r)
		out.exists, out.data, out.version = true, string(r.Data), r.Stat.Version
	case opExists:
		var r jute.StatResponse
		err = jute.Unmarshal(body, &r)
		out.exists, out.version = true, r.Stat.Version
	case opGetChildren:
		var r jute.GetChildren2Response
		if mode == 2 {
			err = jute.Unmarshal(body, &r)
		} else {
			var r1 jute.GetChildrenResponse
			err = jute.Unmarshal(body, &r1)
			r.Children = r1.Children
		}
		out.data = fmt.Sprint(len(r.Children))
	}
	return out, err
}

// onReply takes a call's outcome: it is for the oldest call in flight
// (onFrame checked the xid), and its zxid must not be older than one the
// client saw.
func (c *client) onReply(cn *conn, cl *call, out kvOutput, zxid int64) {
	c.calls = c.calls[1:]
	if zxid < c.maxZxid {
		c.s.fail("zxid went back: c%d saw %d after %d (#%d %s on m%d)", c.id, zxid, c.maxZxid, cl.cxid, cl.in, cn.m.id)
	}
	c.maxZxid = max(c.maxZxid, zxid)
	c.s.ops++
	c.s.logf("c%d <- m%d #%d %s = %s @%d", c.id, cn.m.id, cl.cxid, cl.in, out, zxid)
	c.s.stamp++
	c.s.record(cl, out, c.s.stamp)
	handshake := cl.in.op == opConnect || cl.in.op == opMove
	if !handshake {
		// A ConnectResponse carries no zxid; every other reply comes
		// after the events of the changes it saw.
		c.checkDelivered(cn, zxid, fmt.Sprintf("the reply to #%d (%s)", cl.cxid, cl.in))
		c.replyZxid = max(c.replyZxid, zxid)
	}
	c.armWatch(cl.in, out.code, zxid)
	switch cl.in.op {
	case opSetWatches:
		c.checkOwed(cn, cl, out.code, zxid)
	case opRemoveWatches, opCheckWatches:
		c.expectWatchReply(cn, cl, out.code)
	}
	switch cl.in.op {
	case opConnect, opMove:
		if out.code != jute.OK {
			c.s.logf("c%d: session %x is gone", c.id, c.session)
			c.dead = true
			c.s.sessionEnded(c.session)
			cn.close()
		}
	case opClose:
		if out.code == jute.OK {
			c.dead = true
		}
	}
}

// armWatch records the watch a request with this outcome registered at
// zxid, as in Apache: a getData or getChildren only when it found the
// node, an exists either way (on a missing node, the exist watch that
// NodeCreated fires), an addWatch whenever it succeeds.
func (c *client) armWatch(in kvInput, code jute.Code, zxid int64) {
	switch {
	case in.op == opAddWatch && code == jute.OK:
		for _, kind := range halves(in.mode) {
			c.arm(wkey{in.path, kind}, armedWatch{set: zxid})
		}
	case !in.watch:
	case in.op == opRead && code == jute.OK:
		c.arm(wkey{keyPath(in.key), wData}, armedWatch{set: zxid})
	case in.op == opExists && (code == jute.OK || code == jute.NoNode):
		c.arm(wkey{keyPath(in.key), wData}, armedWatch{set: zxid, exist: code == jute.NoNode})
	case in.op == opGetChildren && code == jute.OK:
		c.arm(wkey{in.path, wChild}, armedWatch{set: zxid})
	}
}

// onEvent takes a watch event: it must match a change on that path, at
// a zxid after the watch was set. The events that come before the reply
// to a setWatches are the ones it owes: checkOwed checks them.
func (c *client) onEvent(cn *conn, ev watch.Event) {
	if cn != c.conn {
		return
	}
	if len(c.calls) > 0 && c.calls[0].in.op == opSetWatches {
		c.calls[0].owed = append(c.calls[0].owed, ev)
		c.s.logf("c%d <- m%d event %d %s (owed by setWatches)", c.id, cn.m.id, ev.Type, ev.Path)
		return
	}
	c.checkEvent(cn, ev)
	if ev.Zxid < c.maxZxid {
		// Its event is queued before any reply computed after the
		// change, the write's own reply among them (DESIGN decision 7);
		// events of one change come together.
		c.s.fail("watch: c%d got an event of zxid %d after seeing %d", c.id, ev.Zxid, c.maxZxid)
	}
	c.maxZxid = max(c.maxZxid, ev.Zxid)
	c.s.logf("c%d <- m%d event %d %s @%d", c.id, cn.m.id, ev.Type, ev.Path, ev.Zxid)
}

// onClose fails everything in flight (ConnectionLoss: each may or may
// not have happened) and reconnects later.
func (c *client) onClose(cn *conn) {
	if cn != c.conn {
		return
	}
	c.s.logf("c%d lost its connection to m%d (%d in flight)", c.id, cn.m.id, len(c.calls))
	for _, cl := range c.calls {
		c.s.record(cl, kvOutput{unknown: true}, 0)
	}
	c.calls = nil
	c.conn = nil
	// The watches stay armed: the next connection re-registers them
	// (setWatches), unless the session is gone.
}
