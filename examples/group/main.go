// Command group joins a group (membership: one ephemeral node per
// member) and prints the member list every time it changes, until
// interrupted or -for has passed. Start a few in separate terminals and
// stop some (Ctrl-C) to watch the list follow:
//
//	go run ./examples/group -server 127.0.0.1:2181 -name alice
//	go run ./examples/group -server 127.0.0.1:2181 -name bob
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address (host:port[,host:port][/chroot])")
	dir := flag.String("dir", "/examples/group", "group directory")
	name := flag.String("name", "member", "this member's unique name")
	dur := flag.Duration("for", 0, "leave after this long (0: run until interrupted)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	g := recipe.NewGroup(c, *dir, nil)
	m, err := g.Join(ctx, *name, nil)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("joined as %s", *name)
	lists, err := g.Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for {
		select {
		case members, ok := <-lists:
			if !ok { // ctx ended, or the session did
				leave(m)
				return
			}
			log.Printf("members: %v", members)
		case <-m.Done():
			log.Fatalf("membership lost: %v", m.Err())
		}
	}
}

func leave(m *recipe.Member) {
	if err := m.Leave(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("left the group")
}
