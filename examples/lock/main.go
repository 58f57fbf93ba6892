// Command lock takes a distributed lock on a Zoo (or ZooKeeper) server,
// holds it for a while, and releases it. Run several at once to see them
// take turns in order of arrival:
//
//	go run ./examples/lock -server 127.0.0.1:2181 -hold 3s
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
	dir := flag.String("dir", "/examples/lock", "lock directory")
	hold := flag.Duration("hold", 3*time.Second, "how long to hold the lock")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := recipe.NewMutex(c, *dir, nil)
	log.Print("waiting for the lock")
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("holding the lock (%s)", m.Node())
	select {
	case <-time.After(*hold):
	case <-m.Done(): // lost: the session expired; stop the critical section
		log.Fatalf("lock lost: %v", m.Err())
	case <-ctx.Done():
	}
	if err := m.Unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("released")
}
