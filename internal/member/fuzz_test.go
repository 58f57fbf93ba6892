package member

import (
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts prints back as text
// that parses to the same membership.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		apacheConfig,
		"version=0",
		"server.1=[::1]:2888:3888:participant;[::1]:2181\nversion=ff",
		"server.1=h:1:2;2181\nserver.2=h:3:4:observer\n",
		"server.1=h:1:2\\\n:observer\nversion=1",
		"server.1=h\\u003a1:1:2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := Parse(text)
		if err != nil {
			return
		}
		out := m.String()
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", text, out, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip of %q:\n%+v\n!=\n%+v", text, m, m2)
		}
		if out2 := m2.String(); out2 != out {
			t.Fatalf("String not stable: %q then %q", out, out2)
		}
	})
}

// FuzzReconfig: Reconfig never panics; what it accepts has enough
// participants, prints as a membership Parse takes back, and is a change
// raft can make.
func FuzzReconfig(f *testing.F) {
	f.Add("server.8=127.0.0.1:1:2:observer;127.0.0.1:5555", "", "")
	f.Add("server.4=127.0.0.1:47109:49573:participant;2184", "1,2", "")
	f.Add("", "4,1", "")
	f.Add("", "", "server.7=h:1:2,server.8=h:3:4:observer")
	f.Add("server.5=garbage", "x", "")
	cur, err := Parse(apacheConfig)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, joining, leaving, newMembers string) {
		next, err := Reconfig(cur, joining, leaving, newMembers)
		if err != nil {
			return
		}
		if n := len(next.Participants()); n < 2 {
			t.Fatalf("accepted %d participants", n)
		}
		back, err := Parse(next.String())
		if err != nil || !reflect.DeepEqual(back, next) {
			t.Fatalf("result %q does not round-trip: %v", next, err)
		}
		checkRaft(t, cur, next)
	})
}
