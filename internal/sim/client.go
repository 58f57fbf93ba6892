package sim

import (
	"fmt"
	"maps"
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
}

func (in kvInput) String() string {
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
	rewatch map[string]armedWatch
	rel     int64
	owed    []watch.Event
}

// armedWatch is a one-time data watch the client holds: set by the reply
// of zxid set, by an exists that found no node (an exist watch, which
// only NodeCreated can fire) or by a read that found it.
type armedWatch struct {
	set   int64
	exist bool
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
}

var _ server.Endpoint = (*conn)(nil)

// ID implements server.Endpoint.
func (c *conn) ID() uint64 { return c.id }

// SessionID implements server.Endpoint.
func (c *conn) SessionID() int64 { return c.session }

// AuthIDs implements server.Endpoint: the simulated clients are the super
// user, as reconfig needs; every node they make is open to all.
func (c *conn) AuthIDs() []jute.Id { return superIDs }

var superIDs = []jute.Id{{Scheme: "super", ID: "super"}}

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
	watches map[string]armedWatch // armed watches by path: they live as long as the session
	written int
	dead    bool // the session ended (expired or closed): start a new one
}

const maxOutstanding = 3

func newClient(s *Sim, id int) *client {
	return &client{s: s, id: id, watches: make(map[string]armedWatch)}
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
	switch c.s.rng.IntN(4) {
	case 0:
		return kvInput{op: opRead, key: k, watch: c.s.chance(0.7)}
	case 1:
		return kvInput{op: opGetChildren, path: "/"}
	case 2:
		return kvInput{op: opExists, key: k, watch: true}
	}
	return kvInput{op: opSyncRead, key: k}
}

func (c *client) pickWrite() kvInput {
	c.written++
	data := fmt.Sprintf("c%d.%d", c.id, c.written)
	k := c.s.rng.IntN(nKeys)
	ver := int32(-1)
	if c.s.chance(0.5) {
		ver = int32(c.s.rng.IntN(4))
	}
	switch r := c.s.rng.IntN(100); {
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
	return kvInput{op: opClose}
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
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(in.data), ACL: openACL}
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
		req.Op, req.Record = jute.OpGetChildren, &jute.PathWatch{Path: in.path}
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
	cn := &conn{id: c.s.connID, m: m, cl: c, handshake: true}
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

// setWatches makes cl the setWatches2 of the client's armed watches: data
// watches, and exist watches for the nodes that were missing, relative
// to the last zxid the client saw.
func (c *client) setWatches(cl *call) *jute.SetWatches2 {
	cl.rewatch, cl.rel = maps.Clone(c.watches), c.maxZxid
	sw := &jute.SetWatches2{RelativeZxid: cl.rel}
	for _, p := range slices.Sorted(maps.Keys(c.watches)) {
		if c.watches[p].exist {
			sw.ExistWatches = append(sw.ExistWatches, p)
		} else {
			sw.DataWatches = append(sw.DataWatches, p)
		}
	}
	return sw
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
		c.maxZxid = max(c.maxZxid, h.Zxid)
		return
	}
	out, err := decodeOutput(cl.in.op, h.Err, rest)
	if err != nil {
		c.s.fail("c%d: undecodable reply to #%d (%s) from m%d: %v", c.id, cl.cxid, cl.in, cn.m.id, err)
	}
	c.onReply(cn, cl, out, h.Zxid)
}

// decodeOutput decodes a reply's body into what the checks compare.
func decodeOutput(op opKind, code jute.Code, body []byte) (kvOutput, error) {
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
		var r jute.GetChildrenResponse
		err = jute.Unmarshal(body, &r)
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
	if cl.in.op == opRead || cl.in.op == opSyncRead || cl.in.op == opExists {
		c.checkNotNewer(cn.m, keyPath(cl.in.key), zxid)
	}
	if c.armed(cl.in, out.code) {
		path := keyPath(cl.in.key)
		if _, ok := c.watches[path]; !ok {
			c.watches[path] = armedWatch{set: zxid, exist: out.code == jute.NoNode}
		}
	}
	if cl.in.op == opSetWatches {
		c.checkOwed(cn, cl, out.code, zxid)
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

// armed reports whether a read with this outcome set a watch: as in
// Apache, a getData only when it found the node, an exists either way
// (on a missing node, the watch NodeCreated fires).
func (c *client) armed(in kvInput, code jute.Code) bool {
	switch {
	case !in.watch:
		return false
	case in.op == opRead:
		return code == jute.OK
	case in.op == opExists:
		return code == jute.OK || code == jute.NoNode
	}
	return false
}

// checkNotNewer: a client never sees data newer than a watch event it has
// not received (DESIGN decision 7): a read of path at zxid must not come
// while a watch on path is armed that a change up to zxid fired.
func (c *client) checkNotNewer(m *member, path string, zxid int64) {
	set, ok := c.watches[path]
	if !ok {
		return
	}
	for _, t := range m.trigLog {
		if t.zxid > set.set && t.zxid <= zxid && t.path == path && t.typ != jute.EventNodeChildrenChanged {
			c.s.fail("watch: c%d read %s at zxid %d before the event of zxid %d (watch set at %d)", c.id, path, zxid, t.zxid, set.set)
			return
		}
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
	w, ok := c.watches[ev.Path]
	if !ok {
		c.s.fail("watch: c%d got %d on %s with no watch armed", c.id, ev.Type, ev.Path)
		return
	}
	delete(c.watches, ev.Path)
	if ev.Zxid <= w.set {
		c.s.fail("watch: c%d got an event of zxid %d for a watch set at %d", c.id, ev.Zxid, w.set)
	}
	if ev.Zxid <= c.maxZxid {
		// Its event is queued before any reply computed after the
		// change, the write's own reply among them (DESIGN decision 7).
		c.s.fail("watch: c%d got an event of zxid %d after seeing %d", c.id, ev.Zxid, c.maxZxid)
	}
	if want := fmt.Sprintf("%d:%s", ev.Type, ev.Path); !containsTrigger(c.s.trig[ev.Zxid], want) {
		c.s.fail("watch: c%d got %s at zxid %d, which made no such change (%s)", c.id, want, ev.Zxid, c.s.trig[ev.Zxid])
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

// checkOwed checks a setWatches' reply, at zxid, against the changes the
// client missed, those after the last zxid it saw (cl.rel) up to zxid:
// each re-registered watch that such a change fires got its event, of
// the right type, before the reply, and no other watch did.
func (c *client) checkOwed(cn *conn, cl *call, code jute.Code, zxid int64) {
	if code != jute.OK {
		c.s.fail("c%d: setWatches on m%d failed with %v", c.id, cn.m.id, code)
		return
	}
	got := make(map[string]int32)
	for _, ev := range cl.owed {
		if _, dup := got[ev.Path]; dup {
			c.s.fail("watch: c%d got two events for its watch on %s at setWatches", c.id, ev.Path)
		}
		got[ev.Path] = ev.Type
	}
	for _, p := range slices.Sorted(maps.Keys(cl.rewatch)) {
		w := cl.rewatch[p]
		want, owed := c.s.owedEvent(p, w.exist, cl.rel, zxid)
		typ, fired := got[p]
		delete(got, p)
		switch {
		case owed && !fired:
			c.s.fail("watch lost across a reconnect: c%d's watch on %s (set at %d) owed event %d for a change in (%d, %d], got none from m%d",
				c.id, p, w.set, want, cl.rel, zxid, cn.m.id)
		case !owed && fired:
			c.s.fail("watch: c%d got %d on %s at setWatches on m%d, with no change in (%d, %d]", c.id, typ, p, cn.m.id, cl.rel, zxid)
		case owed && typ != want:
			c.s.fail("watch: c%d got %d on %s at setWatches on m%d, want %d for the changes in (%d, %d]", c.id, typ, p, cn.m.id, want, cl.rel, zxid)
		}
		if fired {
			delete(c.watches, p)
		} else if _, ok := c.watches[p]; ok {
			// Registered again as of zxid: what changed before it is
			// settled above (an exist watch misses a node created and
			// deleted again meanwhile, as in Apache).
			c.watches[p] = armedWatch{set: zxid, exist: w.exist}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		c.s.fail("watch: c%d got %d on %s at setWatches, a watch it did not re-register", c.id, got[p], p)
	}
}
