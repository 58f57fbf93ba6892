package main

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/zk"
)

// TestQuorumRollingSwitchToTLS follows Apache's documented procedure for
// moving a running ensemble's quorum to TLS without downtime, with three
// `zoo server` processes under a light write load: restart every member
// with portUnification=true (and the quorum stores), then each with
// sslQuorum=true, then each with portUnification=false; one member down
// at a time. Writes are acknowledged while each member is down (the other
// two keep a quorum), every restarted member catches up, no acknowledged
// write is lost, and at the end the quorum port refuses a plaintext peer.
// Ref: ZooKeeper administrator's guide, "Upgrading existing non-TLS
// cluster with no downtime".
func TestQuorumRollingSwitchToTLS(t *testing.T) {
	root := t.TempDir()
	bin := buildZoo(t)
	ca := authtest.NewCA(t, "quorum-ca")
	trust := authtest.WriteFile(t, root, "ca.pem", ca.PEM())
	var servers string
	client, quorum := map[int]int{}, map[int]int{}
	for id := 1; id <= 3; id++ {
		quorum[id] = freePort(t)
		servers += fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", id, quorum[id], freePort(t))
		client[id] = freePort(t)
	}
	kills := map[int]func(){}
	start := func(id int, unified, ssl bool) {
		t.Helper()
		dir, data := memberDirs(t, root, id)
		key := filepath.Join(dir, "key.pem")
		if _, err := os.Stat(key); err != nil {
			authtest.WriteFile(t, dir, "key.pem", ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: fmt.Sprintf("zoo%d", id)}}).PEM(t))
		}
		text := fmt.Sprintf("tickTime=200\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n%s",
			data, client[id], servers)
		if unified || ssl {
			text += fmt.Sprintf("ssl.quorum.keyStore.location=%s\nssl.quorum.trustStore.location=%s\nportUnification=%v\nsslQuorum=%v\n",
				key, trust, unified, ssl)
		}
		cfg := authtest.WriteFile(t, dir, "zoo.cfg", []byte(text))
		// Each start appends to the member's log.
		if b, err := os.ReadFile(filepath.Join(dir, "zoo.log")); err == nil {
			authtest.WriteFile(t, dir, fmt.Sprintf("zoo.log.%d", time.Now().UnixNano()), b)
		}
		kills[id] = runZooBinaryEnv(t, bin, dir, cfg, fmt.Sprintf("127.0.0.1:%d", client[id]))
	}
	for id := 1; id <= 3; id++ {
		start(id, false, false)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var all []string
	for id := 1; id <= 3; id++ {
		all = append(all, fmt.Sprintf("127.0.0.1:%d", client[id]))
	}
	w, err := zk.Connect(ctx, strings.Join(all, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for {
		_, _, err = w.Create(ctx, "/load", nil, 0, zk.OpenACLUnsafe())
		if err == nil || errors.Is(err, zk.ErrNodeExists) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // until a leader is elected; polling with a deadline
	}
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}

	// The load: one write at a time, every 20ms; acked holds the names
	// of the acknowledged ones.
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
			name, _, err := w.Create(wctx, "/load/n-", []byte("x"), zk.PersistentSequential, zk.OpenACLUnsafe())
			wcancel()
			if err == nil {
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		}
	}()
	ackedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), acked...)
	}
	poll := func(what string, cond func() error) {
		t.Helper()
		for {
			err := cond()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond) // polling with a deadline
		}
	}
	// caughtUp: member id has every write acknowledged so far.
	caughtUp := func(id int) error {
		want := ackedNow()
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		c, err := zk.Connect(cctx, all[id-1])
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.Sync(cctx, "/load"); err != nil {
			return err
		}
		kids, _, err := c.Children(cctx, "/load")
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, k := range kids {
			have["/load/"+k] = true
		}
		for _, n := range want {
			if !have[n] {
				return fmt.Errorf("member %d lacks acknowledged %s", id, n)
			}
		}
		return nil
	}

	for _, phase := range []struct{ unified, ssl bool }{{true, false}, {true, true}, {false, true}} {
		for id := 1; id <= 3; id++ {
			kills[id]()
			// The two others keep a quorum: writes go on.
			before := len(ackedNow())
			poll(fmt.Sprintf("writes with member %d down", id), func() error {
				if n := len(ackedNow()); n < before+3 {
					return fmt.Errorf("%d writes acknowledged since member %d stopped", n-before, id)
				}
				return nil
			})
			start(id, phase.unified, phase.ssl)
			poll(fmt.Sprintf("member %d catching up (portUnification=%v sslQuorum=%v)", id, phase.unified, phase.ssl),
				func() error { return caughtUp(id) })
		}
	}
	close(stop)
	<-loadDone
	final := ackedNow()
	if len(final) < 50 {
		t.Fatalf("only %d writes acknowledged over the whole switch", len(final))
	}
	for id := 1; id <= 3; id++ {
		poll(fmt.Sprintf("member %d has every acknowledged write", id), func() error { return caughtUp(id) })
	}

	// TLS only now: a plaintext peer's hello is not answered.
	nc, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", quorum[1]), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	hello := append([]byte("ZOOP\x02\x01"), make([]byte, 17)...)
	hello[13], hello[21] = 2, 1 // from 2 to 1
	if _, err := nc.Write(hello); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if n, err := nc.Read(b); err == nil && n > 0 && b[0] == 0 {
		t.Fatal("a plaintext peer was answered after portUnification=false")
	}
	b1, _ := os.ReadFile(filepath.Join(root, "1", "zoo.log"))
	if !strings.Contains(string(b1), "quorum TLS: mutual TLS") {
		t.Errorf("member 1 did not end on quorum TLS:\n%s", b1)
	}
	t.Logf("%d writes acknowledged during the switch, none lost", len(final))
}
