package bench

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		line string
		want int64
		err  bool
	}{
		{"1234 (zoo) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 100 1000 50", 325, false},
		// a command name with spaces and a ')' of its own
		{"7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 7, false},
		{"7 zoo S 1", 0, true},
		{"7 (zoo) S 1 2 3", 0, true},
		{"7 (zoo) S 1 1 1 0 -1 0 0 0 0 0 x 4 0 0", 0, true},
		{"7 (zoo) S 1 1 1 0 -1 0 0 0 0 0 -5 4 0 0", 0, true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.line))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseStat(%q) = %d, %v; want %d, error %v", tt.line, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrBadStat) {
			t.Errorf("parseStat(%q): error %v is not ErrBadStat", tt.line, err)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (zoo) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0"))
	f.Add([]byte("7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseStat(b)
		if err == nil && n < 0 {
			t.Fatalf("negative ticks %d", n)
		}
	})
}

func TestCPUMeterOwnProcess(t *testing.T) {
	// Meter this test process as the "server": burn CPU until the
	// counter moves (it ticks at 10 ms), then check the report adds up.
	m := NewCPUMeter([]int{os.Getpid()})
	a := m.Sample()
	deadline := time.Now().Add(10 * time.Second)
	var b CPUSample
	for {
		b = m.Sample()
		if b.servers[0]-a.servers[0] >= 3 || time.Now().After(deadline) {
			break
		}
	}
	c, err := cpuBetween(a, b, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerSeconds < 0.03 || c.ServerCores <= 0 || c.ServerCores > 64 {
		t.Fatalf("report %+v after >= 3 ticks of CPU", c)
	}
	if want := c.ServerSeconds / 1000 * 1e6; c.ServerPerOpMicros != want {
		t.Fatalf("per-op %v µs, want %v", c.ServerPerOpMicros, want)
	}
	if none, err := cpuBetween(NewCPUMeter(nil).Sample(), NewCPUMeter(nil).Sample(), 1); none != nil || err != nil {
		t.Fatalf("no servers: %+v, %v; want nil report", none, err)
	}
	gone := NewCPUMeter([]int{1 << 30})
	if _, err := cpuBetween(gone.Sample(), gone.Sample(), 1); err == nil {
		t.Fatal("a server pid that does not exist gives no error")
	}
}

func TestParsePIDs(t *testing.T) {
	p, err := ParsePIDs("12, 34,56")
	if err != nil || len(p) != 3 || p[0] != 12 || p[2] != 56 {
		t.Fatalf("ParsePIDs = %v, %v", p, err)
	}
	if _, err := ParsePIDs("12,x"); err == nil {
		t.Fatal("bad pid accepted")
	}
	if p, err := ParsePIDs(""); err != nil || p != nil {
		t.Fatalf("empty list: %v, %v", p, err)
	}
}
