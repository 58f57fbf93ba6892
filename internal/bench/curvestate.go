package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// What the cost curve reads of the servers' state besides the calls:
// memory from /proc, and counts from four-letter words.

// memKB sums a /proc/PID/status field (VmRSS, VmHWM; in kB) over the
// servers; false when there are none or one cannot be read.
func memKB(pids []int, field string) (int64, bool) {
	if len(pids) == 0 {
		return 0, false
	}
	var sum int64
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			return 0, false
		}
		v, ok := statusField(b, field)
		if !ok {
			return 0, false
		}
		sum += v
	}
	return sum, true
}

// statusField reads "Field:   123 kB" from a /proc/PID/status file.
func statusField(status []byte, field string) (int64, bool) {
	for line := range bytes.Lines(status) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// fourLetter sends a four-letter word and returns the reply.
func fourLetter(ctx context.Context, addr, word string) (string, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	dl, _ := ctx.Deadline()
	if err := nc.SetDeadline(dl); err != nil {
		return "", err
	}
	if _, err := io.WriteString(nc, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(nc, 1<<20))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// ErrNot4lw: the server did not answer a four-letter word with its
// figures (not whitelisted, or not a ZooKeeper server).
var ErrNot4lw = errors.New("bench: no four-letter word answer (is it in 4lw.commands.whitelist?)")

// Mntr returns the server's mntr figures by name.
func Mntr(ctx context.Context, addr string) (map[string]string, error) {
	out, err := fourLetter(ctx, addr, "mntr")
	if err != nil {
		return nil, err
	}
	m := parseMntr(out)
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: mntr: %q", ErrNot4lw, strings.TrimSpace(out))
	}
	return m, nil
}

// parseMntr reads mntr's "key<TAB>value" lines.
func parseMntr(out string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[0], "zk_") {
			m[f[0]] = f[1]
		}
	}
	return m
}

// Wchs is wchs's summary: connections with watches, watched paths and
// watches.
type Wchs struct{ Conns, Paths, Total int64 }

// parseWchs reads Apache's "N connections watching M paths\nTotal
// watches:K"; a figure not found is -1.
func parseWchs(out string) Wchs {
	w := Wchs{-1, -1, -1}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		var c, p int64
		if n, err := fmt.Sscanf(l, "%d connections watching %d paths", &c, &p); n == 2 && err == nil {
			w.Conns, w.Paths = c, p
		}
		if v, ok := strings.CutPrefix(l, "Total watches:"); ok {
			if t, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				w.Total = t
			}
		}
	}
	return w
}

// deleteTree deletes path and everything under it, 16 children of each
// node at a time (256 calls in flight on a fill tree's leaves), spread
// over the sessions. A node already gone is fine.
func deleteTree(ctx context.Context, ss []session, path string) error {
	err := ss[0].Delete(ctx, path, -1)
	if err == nil || errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if !errors.Is(err, zk.ErrNotEmpty) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	kids, _, err := ss[0].Children(ctx, path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("children of %s: %w", path, err)
	}
	if err := parallel(len(kids), 16, func(i int) error {
		return deleteTree(ctx, []session{ss[i%len(ss)]}, path+"/"+kids[i])
	}); err != nil {
		return err
	}
	if err := ss[0].Delete(ctx, path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}
