package config

import "testing"

// Ref: Apache 3.8 ZooKeeperServer.getSnapSizeInBytes: zookeeper.snapSizeLimitInKb,
// default 4194304 (4 GiB); 0 or less turns the limit off.
func TestSnapSizeLimitInKb(t *testing.T) {
	for _, tt := range []struct {
		line string
		want int64
	}{
		{"", DefaultSnapSizeLimitKB},
		{"snapSizeLimitInKb = 1024\n", 1024},
		{"snapSizeLimitInKb = 0\n", -1},
		{"snapSizeLimitInKb = -5\n", -1},
	} {
		c := mustCheck(t, "dataDir = /data\nclientPort = 2181\n"+tt.line)
		if c.SnapSizeLimitKB != tt.want {
			t.Errorf("%q: SnapSizeLimitKB %d, want %d", tt.line, c.SnapSizeLimitKB, tt.want)
		}
		if len(c.Warnings) > 0 {
			t.Errorf("%q: warnings %v, want none", tt.line, c.Warnings)
		}
	}
	if _, err := Parse("zoo.cfg", []byte("dataDir = /data\nsnapSizeLimitInKb = lots\n")); err == nil {
		t.Error("snapSizeLimitInKb = lots: no error")
	}
}
