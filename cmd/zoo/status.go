package main

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// runStatus asks each server of a connect string for mntr and prints one
// line per server: its role, raft term, last zxid, leader, live peer
// links and, from the leader, how many entries each member lags.
func runStatus(args []string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: zoo status host:port[,host:port...]")
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tID\tROLE\tTERM\tZXID\tLEADER\tPEERS\tLAG")
	var failed []string
	for _, addr := range strings.Split(args[0], ",") {
		kv, err := mntr(addr, 3*time.Second)
		if err != nil {
			fmt.Fprintf(tw, "%s\t-\tunreachable\t-\t-\t-\t-\t%v\n", addr, err)
			failed = append(failed, addr)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", addr, or(kv["zk_zoo_server_id"]), or(kv["zk_server_state"]),
			or(kv["zk_zoo_raft_term"]), or(kv["zxid"]), or(kv["zk_zoo_leader_id"]), or(kv["zk_zoo_peers_connected"]), lags(kv))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("no answer from %s", strings.Join(failed, ", "))
	}
	return nil
}

// ask sends a four-letter word and returns the answer.
func ask(addr, word string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// mntr returns mntr's key/value lines, plus srvr's zxid as "zxid" (mntr
// has none, in Apache as here) and, if mntr is not whitelisted, srvr's
// mode as zk_server_state.
func mntr(addr string, timeout time.Duration) (map[string]string, error) {
	out, err := ask(addr, "mntr", timeout)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			kv[k] = v
		}
	}
	// srvr is always allowed (zkServer.sh status relies on it); when
	// mntr is not whitelisted, it still gives the role and the zxid.
	srvr, err := ask(addr, "srvr", timeout)
	if err != nil && len(kv) == 0 {
		return nil, err
	}
	for _, line := range strings.Split(srvr, "\n") {
		if z, ok := strings.CutPrefix(line, "Zxid: "); ok {
			kv["zxid"] = z
		}
		if m, ok := strings.CutPrefix(line, "Mode: "); ok && kv["zk_server_state"] == "" {
			kv["zk_server_state"] = m
		}
	}
	if len(kv) == 0 {
		return nil, fmt.Errorf("neither mntr nor srvr answered: %q", strings.TrimSpace(out+srvr))
	}
	return kv, nil
}

// lags renders the leader's zk_zoo_peer_<id>_lag lines as "2:0 3:15".
func lags(kv map[string]string) string {
	var parts []string
	for k, v := range kv {
		if id, ok := strings.CutPrefix(k, "zk_zoo_peer_"); ok {
			if id, ok := strings.CutSuffix(id, "_lag"); ok {
				parts = append(parts, id+":"+v)
			}
		}
	}
	slices.Sort(parts)
	return or(strings.Join(parts, " "))
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
