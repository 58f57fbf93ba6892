package zk

import (
	"strconv"
	"sync"
)

// EventType says what happened to a watched node.
type EventType int32

// Event types. The first seven are the protocol's (Watcher.Event.EventType).
const (
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5 // RemoveWatches removed a data watch
	EventChildWatchRemoved      EventType = 6 // RemoveWatches removed a child watch
	EventPersistentWatchRemoved EventType = 7 // RemoveWatches removed a persistent watch
	// EventNotWatching is the last event of a watch that ended without a
	// change to its node: the session expired or failed authentication
	// (Err is ErrSessionExpired or ErrAuthFailed), the client was closed
	// (ErrClosed), or a persistent watch's consumer fell behind
	// (ErrWatchOverflow).
	EventNotWatching EventType = -2
	// EventSession tells a persistent watch that its connection went away
	// (State is StateDisconnected) or is back (StateConnected or
	// StateConnectedReadOnly). The server does not replay the changes a
	// persistent watch missed in between, so re-read what you watch after
	// it is back. One-time watches get no session events: the client
	// re-registers them and the server fires those whose node changed.
	EventSession EventType = -1
)

var eventNames = map[EventType]string{
	EventNodeCreated:            "NodeCreated",
	EventNodeDeleted:            "NodeDeleted",
	EventNodeDataChanged:        "NodeDataChanged",
	EventNodeChildrenChanged:    "NodeChildrenChanged",
	EventDataWatchRemoved:       "DataWatchRemoved",
	EventChildWatchRemoved:      "ChildWatchRemoved",
	EventPersistentWatchRemoved: "PersistentWatchRemoved",
	EventNotWatching:            "NotWatching",
	EventSession:                "Session",
}

func (t EventType) String() string {
	if s, ok := eventNames[t]; ok {
		return s
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is a change to a watched node, the end of a watch, or (for
// persistent watches) a change of connection.
type Event struct {
	Type  EventType
	Path  string // the node, as the caller sees it (without the chroot)
	State State  // set only with EventSession
	Err   error  // set only with EventNotWatching
}

// WatchMode selects what AddWatch watches (AddWatchMode; the values are
// the protocol's).
type WatchMode int32

const (
	// WatchPersistent fires on every change to the node's data, its
	// creation and deletion, and changes to its list of children, until
	// removed. It is not consumed by firing.
	WatchPersistent WatchMode = 0
	// WatchPersistentRecursive fires on the creation, deletion and data
	// changes of the node and of every node below it (but not on changes
	// to lists of children), until removed.
	WatchPersistentRecursive WatchMode = 1
)

// WatcherType selects the watches RemoveWatches removes
// (Watcher.WatcherType).
type WatcherType int32

const (
	WatcherChildren WatcherType = 1 // child watches (ChildrenW)
	WatcherData     WatcherType = 2 // data and exist watches (GetW, ExistsW)
	WatcherAny      WatcherType = 3 // every watch on the path, persistent ones too
)

// kind is the client-side category of a watch. It decides which events
// reach it and how it is re-registered after a reconnect (setWatches).
type kind uint8

const (
	kindData       kind = iota // GetW, or ExistsW on an existing node
	kindExist                  // ExistsW on a missing node
	kindChild                  // ChildrenW
	kindPersistent             // AddWatch(WatchPersistent)
	kindRecursive              // AddWatch(WatchPersistentRecursive)
	numKinds
)

func (k kind) persistent() bool { return k == kindPersistent || k == kindRecursive }

// removedType is the event a watch of kind k gets when RemoveWatches
// removes it.
func (k kind) removedType() EventType {
	switch k {
	case kindChild:
		return EventChildWatchRemoved
	case kindPersistent, kindRecursive:
		return EventPersistentWatchRemoved
	}
	return EventDataWatchRemoved
}

// matches reports whether RemoveWatches with type t removes a watch of
// kind k.
func (k kind) matches(t WatcherType) bool {
	switch t {
	case WatcherChildren:
		return k == kindChild
	case WatcherData:
		return k == kindData || k == kindExist
	}
	return true
}

// watch is one registered watch: one channel, filled by the reader
// goroutine, never blocking it.
type watch struct {
	kind kind
	path string // server path
	ch   chan Event
}

// send queues ev without blocking. A one-time watch's channel has room for
// its single event. A persistent watch's channel keeps its last slot for
// the overflow event: once only that slot is left, the watch ends with
// ErrWatchOverflow. Only the registry sends on ch, under its mutex, so
// the length can only shrink between the check and the send.
func (w *watch) send(ev Event) (ended bool) {
	if !w.kind.persistent() {
		w.ch <- ev
		close(w.ch)
		return true
	}
	if len(w.ch) < cap(w.ch)-1 {
		w.ch <- ev
		return false
	}
	w.ch <- Event{Type: EventNotWatching, Path: ev.Path, Err: ErrWatchOverflow}
	close(w.ch)
	return true
}

// end closes the watch with a final event.
func (w *watch) end(ev Event) {
	w.ch <- ev // room is guaranteed: see send
	close(w.ch)
}

// registry holds the client's watches. It is a leaf: its mutex is never
// held while calling out, and it sends on channels only without blocking.
type registry struct {
	mu     sync.Mutex
	byKind [numKinds]map[string][]*watch
	byChan map[<-chan Event]*watch
	ended  error // once set, the registry refuses new watches
	conn   State // the last connection state told to persistent watches

	// clientPath maps a server path to the caller's view (chroot).
	clientPath func(string) string
}

func newRegistry(clientPath func(string) string) *registry {
	r := &registry{byChan: make(map[<-chan Event]*watch), clientPath: clientPath}
	for i := range r.byKind {
		r.byKind[i] = make(map[string][]*watch)
	}
	return r
}

// add registers w, or ends it at once if the registry has ended.
func (r *registry) add(w *watch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil {
		w.end(Event{Type: EventNotWatching, Path: r.clientPath(w.path), Err: r.ended})
		return
	}
	r.byKind[w.kind][w.path] = append(r.byKind[w.kind][w.path], w)
	r.byChan[w.ch] = w
}

// trigger delivers a notification to every watch it concerns, following
// the Java client's rules (ZKWatchManager.materialize): one-time watches
// of the matching kinds on the path fire and are removed; persistent
// watches on the path fire; recursive watches on the path or an ancestor
// fire, except on NodeChildrenChanged.
func (r *registry) trigger(typ EventType, serverPath string) {
	ev := Event{Type: typ, Path: r.clientPath(serverPath)}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch typ {
	case EventNodeCreated, EventNodeDataChanged:
		r.fireOnce(kindData, serverPath, ev)
		r.fireOnce(kindExist, serverPath, ev)
	case EventNodeChildrenChanged:
		r.fireOnce(kindChild, serverPath, ev)
	case EventNodeDeleted:
		r.fireOnce(kindData, serverPath, ev)
		r.fireOnce(kindExist, serverPath, ev)
		r.fireOnce(kindChild, serverPath, ev)
	default:
		return
	}
	r.firePersistent(kindPersistent, serverPath, ev)
	if typ == EventNodeChildrenChanged {
		return
	}
	for p := serverPath; ; p = parent(p) {
		r.firePersistent(kindRecursive, p, ev)
		if p == "/" {
			break
		}
	}
}

func (r *registry) fireOnce(k kind, path string, ev Event) {
	for _, w := range r.byKind[k][path] {
		w.send(ev)
		delete(r.byChan, w.ch)
	}
	delete(r.byKind[k], path)
}

func (r *registry) firePersistent(k kind, path string, ev Event) {
	ws := r.byKind[k][path]
	if len(ws) == 0 {
		return
	}
	kept := ws[:0]
	for _, w := range ws {
		if w.send(ev) {
			delete(r.byChan, w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		delete(r.byKind[k], path)
	} else {
		r.byKind[k][path] = kept
	}
}

// session tells every persistent watch that the connection went away or
// came back (EventSession), once per change.
func (r *registry) session(s State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil || r.conn == s {
		return
	}
	r.conn = s
	for _, k := range []kind{kindPersistent, kindRecursive} {
		for path := range r.byKind[k] {
			r.firePersistent(k, path, Event{Type: EventSession, Path: r.clientPath(path), State: s})
		}
	}
}

// removeMatching ends the watches on path that RemoveWatches(t) removes,
// each with its WatchRemoved event, and reports whether there were any.
func (r *registry) removeMatching(serverPath string, t WatcherType) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	found := false
	for k := kind(0); k < numKinds; k++ {
		if !k.matches(t) {
			continue
		}
		for _, w := range r.byKind[k][serverPath] {
			w.end(Event{Type: k.removedType(), Path: r.clientPath(serverPath)})
			delete(r.byChan, w.ch)
			found = true
		}
		delete(r.byKind[k], serverPath)
	}
	return found
}

// has reports whether some watch on path would be removed by
// RemoveWatches(t).
func (r *registry) has(serverPath string, t WatcherType) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := kind(0); k < numKinds; k++ {
		if k.matches(t) && len(r.byKind[k][serverPath]) > 0 {
			return true
		}
	}
	return false
}

// lookup finds the watch that owns ch and reports the server-side
// removal (path and type) that would remove it, and whether that removal
// would also take away another watch the client still has.
func (r *registry) lookup(ch <-chan Event) (w *watch, t WatcherType, shared bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w = r.byChan[ch]
	if w == nil {
		return nil, 0, false
	}
	t = serverType(w.kind)
	for k := kind(0); k < numKinds; k++ {
		// A persistent watch shares the server's entry for its path with
		// every other watch there (see pinned).
		if !k.matches(t) && !k.persistent() {
			continue
		}
		for _, o := range r.byKind[k][w.path] {
			if o != w {
				shared = true
			}
		}
	}
	return w, t, shared
}

// pinned reports whether a persistent watch sits on path itself. The
// server then has one entry there, in persistent mode, which serves the
// one-time watches on the path too (see covers); removing data or child
// watches on the server would take it away.
func (r *registry) pinned(serverPath string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byKind[kindPersistent][serverPath])+len(r.byKind[kindRecursive][serverPath]) > 0
}

// covers reports whether a persistent watch the client has already brings
// every event a one-time watch of kind k on path needs: a persistent watch
// on the path itself (any kind), or a recursive one on it or an ancestor
// (not for child watches: recursive watches get no NodeChildrenChanged).
//
// Such a one-time watch is kept by the client only. Setting it on the
// server too would break the persistent watch on Apache 3.8, where a
// session has one watch mode per path and a one-time watch replaces a
// persistent one (ZOOKEEPER-4466).
func (r *registry) covers(serverPath string, k kind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.byKind[kindPersistent][serverPath]) > 0 {
		return true
	}
	if k == kindChild {
		return false
	}
	for p := serverPath; ; p = parent(p) {
		if len(r.byKind[kindRecursive][p]) > 0 {
			return true
		}
		if p == "/" {
			return false
		}
	}
}

// serverType is the removeWatches type that removes a watch of kind k on
// the server. Apache 3.8 knows no persistent types, and removes persistent
// watches with Any.
func serverType(k kind) WatcherType {
	switch k {
	case kindData, kindExist:
		return WatcherData
	case kindChild:
		return WatcherChildren
	}
	return WatcherAny
}

// remove ends one watch with its WatchRemoved event; false if it is gone.
func (r *registry) remove(w *watch) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byChan[w.ch] != w {
		return false
	}
	delete(r.byChan, w.ch)
	ws := r.byKind[w.kind][w.path]
	for i, o := range ws {
		if o == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(r.byKind[w.kind], w.path)
	} else {
		r.byKind[w.kind][w.path] = ws
	}
	w.end(Event{Type: w.kind.removedType(), Path: r.clientPath(w.path)})
	return true
}

// endAll ends every watch with err and refuses new ones: the session is
// over.
func (r *registry) endAll(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil {
		return
	}
	r.ended = err
	for k := range r.byKind {
		for path, ws := range r.byKind[k] {
			for _, w := range ws {
				w.end(Event{Type: EventNotWatching, Path: r.clientPath(path), Err: err})
			}
		}
		r.byKind[k] = nil
	}
	r.byChan = nil
}

// snapshot lists the watched paths per kind, for setWatches after a
// reconnect.
func (r *registry) snapshot() (lists [numKinds][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.byKind {
		for path := range r.byKind[k] {
			lists[k] = append(lists[k], path)
		}
	}
	return lists
}

// parent returns the parent of a path other than "/".
func parent(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
