package auth

import "testing"

func TestShortName(t *testing.T) {
	for _, tc := range []struct {
		in              string
		noHost, noRealm bool
		want            string
	}{
		{"bob", true, true, "bob"},
		{"zk/host.example.com@EXAMPLE.COM", false, false, "zk/host.example.com@EXAMPLE.COM"},
		{"zk/host.example.com@EXAMPLE.COM", true, false, "zk@EXAMPLE.COM"},
		{"zk/host.example.com@EXAMPLE.COM", false, true, "zk/host.example.com"},
		{"zk/host.example.com@EXAMPLE.COM", true, true, "zk"},
		{"bob@EXAMPLE.COM", true, true, "bob"},
	} {
		if got := ShortName(tc.in, tc.noHost, tc.noRealm); got != tc.want {
			t.Errorf("ShortName(%q, %v, %v) = %q, want %q", tc.in, tc.noHost, tc.noRealm, got, tc.want)
		}
	}
}
