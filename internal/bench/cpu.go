package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Server CPU comes from /proc/PID/stat: the utime and stime of every
// thread of the process, in clock ticks. Reading it costs the server
// nothing, and it is what shared/bench and the paper's per-op cost use.

// clockTicks is USER_HZ, which Linux fixes at 100 on every architecture
// it exports to user space (sysconf(_SC_CLK_TCK) without cgo).
const clockTicks = 100

// ErrBadStat is returned for a /proc/PID/stat line that cannot be read.
var ErrBadStat = errors.New("bench: malformed /proc stat line")

// parseStat returns utime+stime from one /proc/PID/stat line, in ticks.
// The command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so fields are counted from the last ')'.
func parseStat(line []byte) (int64, error) {
	s := string(line)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, ErrBadStat
	}
	// After ')': state is field 3, utime field 14, stime field 15.
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%w: %d fields after the command", ErrBadStat, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || u < 0 || st < 0 {
		return 0, fmt.Errorf("%w: utime %q stime %q", ErrBadStat, f[11], f[12])
	}
	return u + st, nil
}

// CPUMeter samples the CPU time of the server processes and of this one.
type CPUMeter struct {
	pids []int
}

// NewCPUMeter meters the given processes; with none it still meters the
// load generator itself.
func NewCPUMeter(pids []int) *CPUMeter { return &CPUMeter{pids: pids} }

// CPUSample is the CPU time used so far, in ticks.
type CPUSample struct {
	at      time.Time
	self    int64
	servers []int64
	err     error
}

func procTicks(pid string) (int64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStat(b)
}

// Sample reads the counters now. A server that cannot be read (gone,
// or no /proc) makes the report say so rather than claim zero CPU.
func (m *CPUMeter) Sample() CPUSample {
	s := CPUSample{at: time.Now()}
	s.self, _ = procTicks("self")
	for _, p := range m.pids {
		t, err := procTicks(strconv.Itoa(p))
		if err != nil && s.err == nil {
			s.err = fmt.Errorf("server pid %d: %w", p, err)
		}
		s.servers = append(s.servers, t)
	}
	return s
}

// CPU is where the cores went during a measured window.
type CPU struct {
	// ServerCores is the servers' CPU time over the window's length
	// (1.0 = one core busy); ServerSeconds the time itself.
	ServerCores   float64   `json:"server_cores"`
	ServerSeconds float64   `json:"server_cpu_s"`
	PerServer     []float64 `json:"per_server_cores,omitempty"`
	// ServerPerOpMicros is server CPU time per operation, in µs.
	ServerPerOpMicros float64 `json:"server_cpu_per_op_us"`
	ClientCores       float64 `json:"client_cores"`
}

// cpuBetween computes the report for ops operations done between a and b.
// It is nil when no server was metered.
func cpuBetween(a, b CPUSample, ops int64) (*CPU, error) {
	if len(a.servers) == 0 {
		return nil, nil
	}
	if err := errors.Join(a.err, b.err); err != nil {
		return nil, err
	}
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return nil, fmt.Errorf("bench: empty CPU window")
	}
	c := &CPU{ClientCores: float64(b.self-a.self) / clockTicks / wall}
	for i := range a.servers {
		sec := float64(b.servers[i]-a.servers[i]) / clockTicks
		c.ServerSeconds += sec
		c.PerServer = append(c.PerServer, sec/wall)
	}
	c.ServerCores = c.ServerSeconds / wall
	if ops > 0 {
		c.ServerPerOpMicros = c.ServerSeconds / float64(ops) * 1e6
	}
	return c, nil
}

// ParsePIDs reads a comma-separated list of process ids.
func ParsePIDs(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("bad pid %q in -server-pids", f)
		}
		pids = append(pids, p)
	}
	return pids, nil
}
