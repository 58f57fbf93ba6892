package zk

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: Apache PathUtils.validatePath, which the Java client applies to
// every path before sending it.
func TestValidatePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		seq  bool
		ok   bool
	}{
		{"/", false, true},
		{"/a", false, true},
		{"/a/b-c_d.e", false, true},
		{"/a/...", false, true},
		{"/a/.b", false, true},
		{"/ü/日本", false, true},
		{"", false, false},
		{"a", false, false},
		{"/a/", false, false},
		{"/a/", true, true}, // a sequential node's prefix may end in /
		{"//a", false, false},
		{"/a//b", false, false},
		{"/a//", true, false},
		{"/.", false, false},
		{"/a/./b", false, false},
		{"/a/..", false, false},
		{"/a\x00b", false, false},
		{"/a\x1fb", false, false},
		{"/a\u007fb", false, false},
		{"/a\u009fb", false, false},
		{"/a\ud7ffb", false, true},
		{"/a\ue000b", false, false},    // private use: Java refuses D800-F8FF
		{"/a\ufff0b", false, false},    // specials
		{"/a\U0001F600", false, false}, // outside the BMP: surrogates in Java
		{"/a\xff", false, false},       // not UTF-8
	}
	for _, tt := range tests {
		err := validatePath(tt.path, tt.seq)
		if (err == nil) != tt.ok {
			t.Errorf("validatePath(%q, %v) = %v, want ok=%v", tt.path, tt.seq, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidPath) {
			t.Errorf("validatePath(%q): %v is not ErrInvalidPath", tt.path, err)
		}
	}
}

// Ref: programmer's guide, "ZooKeeper Sessions" (the connect string), and
// the Java ConnectStringParser (default port, chroot suffix).
func TestParseConnectString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		hosts  []string
		chroot string
		bad    bool
	}{
		{in: "127.0.0.1:2181", hosts: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2,c", hosts: []string{"a:1", "b:2", "c:2181"}},
		{in: " a:1 , b:2 ", hosts: []string{"a:1", "b:2"}},
		{in: "a:1,b:2/app/x", hosts: []string{"a:1", "b:2"}, chroot: "/app/x"},
		{in: "a:1/", hosts: []string{"a:1"}, chroot: ""},
		{in: "[::1]:2182,[::1]", hosts: []string{"[::1]:2182", "[::1]:2181"}},
		{in: "", bad: true},
		{in: "/app", bad: true},
		{in: "a:1/app/", bad: true},
		{in: "a:1//x", bad: true},
		{in: "::1", bad: true},
		{in: ":2181", bad: true},
	}
	for _, tt := range tests {
		hosts, chroot, err := parseConnectString(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrInvalidConnectString) {
				t.Errorf("parse(%q) = %v, %q, %v; want ErrInvalidConnectString", tt.in, hosts, chroot, err)
			}
			continue
		}
		if err != nil || !slices.Equal(hosts, tt.hosts) || chroot != tt.chroot {
			t.Errorf("parse(%q) = %v, %q, %v; want %v, %q", tt.in, hosts, chroot, err, tt.hosts, tt.chroot)
		}
	}
}

func TestChrootPaths(t *testing.T) {
	t.Parallel()
	c := &Client{chroot: "/app"}
	for _, tt := range []struct{ client, server string }{
		{"/", "/app"}, {"/a", "/app/a"}, {"/a/b", "/app/a/b"},
	} {
		if got := c.serverPath(tt.client); got != tt.server {
			t.Errorf("serverPath(%q) = %q, want %q", tt.client, got, tt.server)
		}
		if got := c.clientPath(tt.server); got != tt.client {
			t.Errorf("clientPath(%q) = %q, want %q", tt.server, got, tt.client)
		}
	}
	// A sibling that merely shares the prefix is not under the chroot.
	if got := c.clientPath("/apple"); got != "/apple" {
		t.Errorf("clientPath(/apple) = %q", got)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	err := error(&Error{Op: "getData", Path: "/a/b", Err: Code(-101)})
	if !errors.Is(err, ErrNoNode) {
		t.Errorf("%v is not ErrNoNode", err)
	}
	if errors.Is(err, ErrNodeExists) {
		t.Errorf("%v is ErrNodeExists", err)
	}
	var code Code
	if !errors.As(err, &code) || code != -101 {
		t.Errorf("errors.As code = %d", code)
	}
	if got, want := err.Error(), "zk: getData /a/b: node does not exist"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("lock: %w", err)
	if !errors.Is(wrapped, ErrNoNode) {
		t.Errorf("wrapped error lost its code")
	}
	if got := (&Error{Op: "whoAmI", Err: ErrClosed}).Error(); got != "zk: whoAmI: client is closed" {
		t.Errorf("text %q", got)
	}
	// Every code Apache defines has a sentinel and a name.
	for c, d := range codes {
		if c != 0 && (Code(c).String() != d.name || !strings.HasPrefix(Code(c).Error(), "zk: ")) {
			t.Errorf("code %d: %q %q", c, Code(c).String(), Code(c).Error())
		}
	}
	// ... and every code the protocol package knows is one of them.
	for i := -200; i < 0; i++ {
		if name := jute.Code(i).String(); !strings.HasPrefix(name, "Code(") && Code(i).String() != name {
			t.Errorf("jute code %d (%s) has no sentinel here (%s)", i, name, Code(i))
		}
	}
	if Code(-999).String() != "Code(-999)" {
		t.Errorf("unknown code: %q", Code(-999).String())
	}
}

// Ref: programmer's guide, "Builtin ACL Schemes": digest is
// username:base64(sha1(username:password)). The value is what Apache's
// DigestAuthenticationProvider prints for "super:superpw" (java -cp
// zookeeper.jar org.apache.zookeeper.server.auth.DigestAuthenticationProvider).
func TestDigest(t *testing.T) {
	t.Parallel()
	if got, want := Digest("super", "superpw"), "super:g9oN2HttPfn8MMWJZ2r45Np/LIA="; got != want {
		t.Errorf("Digest = %q, want %q", got, want)
	}
	acl := DigestACL(PermRead, "u", "p")
	if len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].ID != Digest("u", "p") || acl[0].Perms != PermRead {
		t.Errorf("DigestACL = %+v", acl)
	}
	if a := OpenACLUnsafe(); a[0] != (ACL{PermAll, "world", "anyone"}) {
		t.Errorf("OpenACLUnsafe = %+v", a)
	}
	if a := CreatorAllACL(); a[0] != (ACL{PermAll, "auth", ""}) {
		t.Errorf("CreatorAllACL = %+v", a)
	}
	// Each call returns a fresh slice: no shared global to corrupt.
	a := OpenACLUnsafe()
	a[0].Perms = 0
	if OpenACLUnsafe()[0].Perms != PermAll {
		t.Errorf("OpenACLUnsafe shares its slice")
	}
}

// Ref: programmer's guide, "ZooKeeper Watches" (which events fire data and
// child watches), and the Java client's ZKWatchManager.materialize (which
// local watches an event reaches, persistent and recursive included).
func TestRegistryTrigger(t *testing.T) {
	t.Parallel()
	kinds := []kind{kindData, kindExist, kindChild, kindPersistent, kindRecursive}
	names := map[kind]string{kindData: "data", kindExist: "exist", kindChild: "child", kindPersistent: "persistent", kindRecursive: "recursive"}
	tests := []struct {
		typ       EventType
		path      string // the event's path; watches are on /a
		wantFired []kind
	}{
		{EventNodeCreated, "/a", []kind{kindData, kindExist, kindPersistent, kindRecursive}},
		{EventNodeDataChanged, "/a", []kind{kindData, kindExist, kindPersistent, kindRecursive}},
		{EventNodeDeleted, "/a", []kind{kindData, kindExist, kindChild, kindPersistent, kindRecursive}},
		{EventNodeChildrenChanged, "/a", []kind{kindChild, kindPersistent}},
		{EventNodeCreated, "/a/b/c", []kind{kindRecursive}},
		{EventNodeDeleted, "/a/b", []kind{kindRecursive}},
		{EventNodeChildrenChanged, "/a/b", nil},
		{EventNodeDataChanged, "/ab", nil},
		{EventNodeDataChanged, "/", nil},
	}
	for _, tt := range tests {
		r := newRegistry(func(p string) string { return p })
		chans := map[kind]chan Event{}
		for _, k := range kinds {
			chans[k] = make(chan Event, 4)
			r.add(&watch{kind: k, path: "/a", ch: chans[k]})
		}
		r.trigger(tt.typ, tt.path)
		for _, k := range kinds {
			fired := len(chans[k]) > 0
			if want := slices.Contains(tt.wantFired, k); fired != want {
				t.Errorf("%v on %s: %s watch fired=%v, want %v", tt.typ, tt.path, names[k], fired, want)
			}
			if fired {
				if ev := <-chans[k]; ev.Type != tt.typ || ev.Path != tt.path {
					t.Errorf("%s watch got %+v", names[k], ev)
				}
			}
		}
		// One-time watches that fired are gone and closed; the rest stay.
		lists := r.snapshot()
		for _, k := range kinds {
			registered := len(lists[k]) == 1
			want := k.persistent() || !slices.Contains(tt.wantFired, k)
			if registered != want {
				t.Errorf("%v on %s: %s watch registered=%v, want %v", tt.typ, tt.path, names[k], registered, want)
			}
		}
	}
}

// Ref: programmer's guide, "Things to Remember about Watches": a watch
// registered twice for one change is triggered once. Here two calls
// registered two channels on one path: one notification, one event each.
func TestRegistryOneEventPerWatch(t *testing.T) {
	t.Parallel()
	r := newRegistry(func(p string) string { return p })
	a, b := make(chan Event, 1), make(chan Event, 1)
	r.add(&watch{kind: kindData, path: "/x", ch: a})
	r.add(&watch{kind: kindData, path: "/x", ch: b})
	r.trigger(EventNodeDataChanged, "/x")
	r.trigger(EventNodeDeleted, "/x") // the watches are spent
	for _, ch := range []chan Event{a, b} {
		if ev, ok := <-ch; !ok || ev.Type != EventNodeDataChanged {
			t.Fatalf("first event %+v %v", ev, ok)
		}
		if ev, ok := <-ch; ok {
			t.Fatalf("second event %+v; want closed", ev)
		}
	}
}

// A persistent watch whose consumer does not read fills its channel; the
// last slot carries ErrWatchOverflow and the channel closes. Nothing is
// dropped silently, and memory stays bounded.
func TestRegistryOverflow(t *testing.T) {
	t.Parallel()
	r := newRegistry(func(p string) string { return p })
	ch := make(chan Event, 4)
	r.add(&watch{kind: kindPersistent, path: "/x", ch: ch})
	for range 10 {
		r.trigger(EventNodeDataChanged, "/x")
	}
	var got []Event
	for ev := range ch {
		got = append(got, ev)
	}
	if len(got) != 4 {
		t.Fatalf("got %d events, want 3 and the overflow: %+v", len(got), got)
	}
	for _, ev := range got[:3] {
		if ev.Type != EventNodeDataChanged {
			t.Errorf("event %+v", ev)
		}
	}
	if last := got[3]; last.Type != EventNotWatching || !errors.Is(last.Err, ErrWatchOverflow) {
		t.Errorf("last event %+v, want overflow", last)
	}
	if lists := r.snapshot(); len(lists[kindPersistent]) != 0 {
		t.Errorf("overflowed watch still registered")
	}
}

func TestRegistryEndAndRemove(t *testing.T) {
	t.Parallel()
	r := newRegistry(func(p string) string { return "/c" + p })
	once := make(chan Event, 1)
	pers := make(chan Event, 3)
	child := make(chan Event, 1)
	r.add(&watch{kind: kindData, path: "/x", ch: once})
	r.add(&watch{kind: kindPersistent, path: "/x", ch: pers})
	r.add(&watch{kind: kindChild, path: "/x", ch: child})

	if !r.removeMatching("/x", WatcherChildren) {
		t.Fatal("removeMatching(children) found nothing")
	}
	if ev := <-child; ev.Type != EventChildWatchRemoved || ev.Path != "/c/x" {
		t.Errorf("child watch: %+v", ev)
	}
	if r.removeMatching("/x", WatcherChildren) {
		t.Error("removed the child watch twice")
	}
	w, typ, shared := r.lookup(pers)
	if w == nil || typ != WatcherAny || !shared {
		t.Errorf("lookup(persistent) = %v %v %v; want Any, shared with the data watch", w, typ, shared)
	}
	r.trigger(EventNodeDataChanged, "/x")
	<-pers
	r.endAll(ErrSessionExpired)
	for _, ch := range []chan Event{once, pers} {
		var last Event
		for ev := range ch {
			last = ev
		}
		if ch == pers && (last.Type != EventNotWatching || !errors.Is(last.Err, ErrSessionExpired)) {
			t.Errorf("persistent watch ended with %+v", last)
		}
	}
	// A watch added after the end is ended at once.
	late := make(chan Event, 1)
	r.add(&watch{kind: kindData, path: "/y", ch: late})
	if ev := <-late; !errors.Is(ev.Err, ErrSessionExpired) {
		t.Errorf("late watch got %+v", ev)
	}
}

func TestRegistryCovers(t *testing.T) {
	t.Parallel()
	r := newRegistry(func(p string) string { return p })
	r.add(&watch{kind: kindPersistent, path: "/p", ch: make(chan Event, 2)})
	r.add(&watch{kind: kindRecursive, path: "/r", ch: make(chan Event, 2)})
	for _, tt := range []struct {
		path string
		k    kind
		want bool
	}{
		{"/p", kindData, true}, {"/p", kindChild, true}, {"/p/x", kindData, false},
		{"/r", kindData, true}, {"/r/x/y", kindData, true}, {"/r", kindChild, false},
		{"/q", kindData, false},
	} {
		if got := r.covers(tt.path, tt.k); got != tt.want {
			t.Errorf("covers(%s, %d) = %v, want %v", tt.path, tt.k, got, tt.want)
		}
	}
}

// The public enums are the protocol's numbers.
func TestWireValues(t *testing.T) {
	t.Parallel()
	pairs := []struct {
		name      string
		got, want int64
	}{
		{"WatchPersistent", int64(WatchPersistent), int64(jute.AddWatchPersistent)},
		{"WatchPersistentRecursive", int64(WatchPersistentRecursive), int64(jute.AddWatchPersistentRecursive)},
		{"WatcherChildren", int64(WatcherChildren), int64(jute.WatcherChildren)},
		{"WatcherData", int64(WatcherData), int64(jute.WatcherData)},
		{"WatcherAny", int64(WatcherAny), int64(jute.WatcherAny)},
		{"EventNodeCreated", int64(EventNodeCreated), int64(jute.EventNodeCreated)},
		{"EventPersistentWatchRemoved", int64(EventPersistentWatchRemoved), int64(jute.EventPersistentWatchRemoved)},
		{"Ephemeral", int64(Ephemeral), int64(jute.FlagEphemeral)},
		{"Container", int64(Container), int64(jute.FlagContainer)},
		{"PersistentSequentialWithTTL", int64(PersistentSequentialWithTTL), int64(jute.FlagPersistentSequentialWithTTL)},
		{"PermAll", int64(PermAll), int64(jute.PermAll)},
		{"ErrNoNode", int64(ErrNoNode.(Code)), int64(jute.NoNode)},
		{"ErrThrottled", int64(ErrThrottled.(Code)), int64(jute.Throttled)},
	}
	for _, p := range pairs {
		if p.got != p.want {
			t.Errorf("%s = %d, want %d", p.name, p.got, p.want)
		}
	}
}

// Persistent watches hear of each connection change once; one-time
// watches hear nothing (they are re-registered and replayed instead).
func TestRegistrySessionEvents(t *testing.T) {
	t.Parallel()
	r := newRegistry(func(p string) string { return p })
	once := make(chan Event, 1)
	pers := make(chan Event, 8)
	rec := make(chan Event, 8)
	r.add(&watch{kind: kindData, path: "/x", ch: once})
	r.add(&watch{kind: kindPersistent, path: "/x", ch: pers})
	r.add(&watch{kind: kindRecursive, path: "/", ch: rec})
	r.session(StateConnected)
	r.session(StateDisconnected)
	r.session(StateDisconnected)
	r.session(StateConnected)
	if len(once) != 0 {
		t.Errorf("one-time watch got %+v", <-once)
	}
	for _, ch := range []chan Event{pers, rec} {
		var got []State
		for len(ch) > 0 {
			ev := <-ch
			if ev.Type != EventSession {
				t.Errorf("event %+v", ev)
			}
			got = append(got, ev.State)
		}
		if !slices.Equal(got, []State{StateConnected, StateDisconnected, StateConnected}) {
			t.Errorf("session events %v", got)
		}
	}
}
