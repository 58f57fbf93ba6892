package tree

import (
	"slices"
	"testing"
)

// quotaScript replays what zkCli's setquota/delquota and plain writes did
// to Apache 3.8.0, and the zookeeper_stats data Apache showed after each
// step.
func TestQuotaStatsFollowApache(t *testing.T) {
	tr := New()
	zxid := int64(0)
	create := func(path, data string) {
		zxid++
		var d []byte
		if data != "" {
			d = []byte(data)
		}
		mustCreate(t, tr, path, d, 0, zxid)
	}
	set := func(path, data string) {
		zxid++
		if _, err := tr.SetData(path, []byte(data), int32(zxid), zxid, zxid); err != nil {
			t.Fatal(err)
		}
	}
	del := func(path string) {
		zxid++
		if err := tr.DeleteNode(path, zxid); err != nil {
			t.Fatal(err)
		}
	}
	stats := func(path, want string) {
		t.Helper()
		d, st, err := tr.Get(StatPath(path))
		if err != nil || string(d) != want || st.DataLength != int32(len(want)) {
			t.Errorf("stats of %s = %q (%+v, %v), want %q", path, d, st, err, want)
		}
	}

	// create /q; create /q/a hello; setquota -n 10 /q
	create("/q", "")
	create("/q/a", "hello")
	create("/zookeeper/quota/q", "")
	create("/zookeeper/quota/q/zookeeper_limits", "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1")
	create("/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0")
	stats("/q", "count=2,bytes=5")
	if st := mustStat(t, tr, StatPath("/q")); st.Mzxid != zxid || st.Version != 0 {
		t.Errorf("stats node stat %+v: its data changes without a version", st)
	}

	// /q2 with b c d before the quota; setquota -N 2 /q2; setquota -B 10 /q2
	create("/q2", "")
	create("/q2/b", "123456")
	create("/q2/c", "")
	create("/q2/d", "")
	create("/zookeeper/quota/q2", "")
	create("/zookeeper/quota/q2/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2")
	create("/zookeeper/quota/q2/zookeeper_stats", "count=0,bytes=0")
	stats("/q2", "count=4,bytes=6")
	set("/zookeeper/quota/q2/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=2")

	// Apache 3.8.0 does not enforce (zookeeper.enforceQuota=false): the
	// creates succeed, and prep would have been told of the overrun.
	got := tr.CheckQuota("/q2/f", 14, 1)
	want := []QuotaOverrun{
		{Prefix: "/q2", Count: true, Hard: true, Value: 5, Limit: 2},
		{Prefix: "/q2", Count: false, Hard: true, Value: 20, Limit: 10},
	}
	if !slices.Equal(got, want) {
		t.Errorf("CheckQuota = %+v, want %+v", got, want)
	}
	create("/q2/e", "")
	create("/q2/f", "12345678901234")
	stats("/q2", "count=6,bytes=20")
	set("/q2/b", "1")
	stats("/q2", "count=6,bytes=15")
	del("/q2/f")
	stats("/q2", "count=5,bytes=1")
	stats("/q", "count=2,bytes=5") // untouched by /q2's changes

	// delquota /q2 deletes the quota nodes: no more tracking.
	del("/zookeeper/quota/q2/zookeeper_limits")
	del("/zookeeper/quota/q2/zookeeper_stats")
	del("/zookeeper/quota/q2")
	create("/q2/g", "zz")
	if got := tr.CheckQuota("/q2/h", 1, 1); got != nil {
		t.Errorf("CheckQuota after delquota = %+v", got)
	}
	checkInvariants(t, tr)
}

func TestCheckQuota(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/q", nil, 0, 1)
	mustCreate(t, tr, "/q/n", nil, 0, 2)
	mustCreate(t, tr, "/zookeeper/quota/q", nil, 0, 3)
	mustCreate(t, tr, LimitPath("/q"), []byte("count=2,bytes=4"), 0, 4)
	mustCreate(t, tr, StatPath("/q"), nil, 0, 5) // count=2,bytes=0
	tests := []struct {
		name         string
		path         string
		bytes, count int64
		want         []QuotaOverrun
	}{
		{"soft count", "/q/n/x", 0, 1, []QuotaOverrun{{Prefix: "/q", Count: true, Value: 3, Limit: 2}}},
		{"soft bytes", "/q/n", 5, 0, []QuotaOverrun{{Prefix: "/q", Value: 5, Limit: 4}}},
		{"within", "/q/n", 4, 0, nil},
		{"shrinking", "/q/n", -1, -1, nil},
		{"outside", "/r", 100, 1, nil},
		{"quota'd node itself", "/q", 5, 0, []QuotaOverrun{{Prefix: "/q", Value: 5, Limit: 4}}},
		{"no change", "/q/n", 0, 0, nil},
	}
	for _, tc := range tests {
		if got := tr.CheckQuota(tc.path, tc.bytes, tc.count); !slices.Equal(got, tc.want) {
			t.Errorf("%s: CheckQuota = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// A nested quota takes over its subtree (the deepest prefix wins).
	mustCreate(t, tr, "/zookeeper/quota/q/n", nil, 0, 6)
	mustCreate(t, tr, LimitPath("/q/n"), []byte("count=-1,bytes=-1=;countHardLimit=1"), 0, 7)
	mustCreate(t, tr, StatPath("/q/n"), nil, 0, 8)
	want := []QuotaOverrun{{Prefix: "/q/n", Count: true, Hard: true, Value: 2, Limit: 1}}
	if got := tr.CheckQuota("/q/n/x", 0, 1); !slices.Equal(got, want) {
		t.Errorf("nested: CheckQuota = %+v, want %+v", got, want)
	}
}

// TestStatsTrack checks the StatsTrack string format round trip, with
// strings Apache 3.8.0 wrote.
func TestStatsTrack(t *testing.T) {
	tests := []struct {
		in, out            string
		count, bytes, hard int64
	}{
		{"count=2,bytes=5", "count=2,bytes=5", 2, 5, -1},
		{"count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1", "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1", 10, -1, -1},
		{"count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=2", "count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=2", -1, -1, 2},
		{"countHardLimit=3;count=1", "count=1,bytes=-1=;countHardLimit=3", 1, -1, 3},
		{"", "count=-1,bytes=-1", -1, -1, -1},
		{"count=,bytes=7", "count=-1,bytes=7", -1, 7, -1},
		{"count=x,junk,bytes=7;;", "count=-1,bytes=7", -1, 7, -1},
	}
	for _, tc := range tests {
		st := parseStats([]byte(tc.in))
		if st.get(statCount) != tc.count || st.get(statBytes) != tc.bytes || st.get(statCountHard) != tc.hard {
			t.Errorf("parse %q: %v", tc.in, st)
		}
		if got := string(st.bytes()); got != tc.out {
			t.Errorf("format %q = %q, want %q", tc.in, got, tc.out)
		}
	}
}
