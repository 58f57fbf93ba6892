// Command rwlock takes the read or the write side of a distributed
// shared lock (recipes guide, "Shared Locks"), holds it for a while and
// releases it. Readers share the lock; a writer excludes everyone. Try
// two readers and a writer in three terminals:
//
//	go run ./examples/rwlock -server 127.0.0.1:2181 -mode read -hold 5s
//	go run ./examples/rwlock -server 127.0.0.1:2181 -mode read -hold 5s
//	go run ./examples/rwlock -server 127.0.0.1:2181 -mode write -hold 2s
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
	dir := flag.String("dir", "/examples/rwlock", "lock directory")
	mode := flag.String("mode", "read", "read or write")
	hold := flag.Duration("hold", 3*time.Second, "how long to hold the lock")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := recipe.NewRWMutex(c, *dir, nil)
	lock, unlock, done := m.RLock, m.RUnlock, m.RDone
	switch *mode {
	case "read":
	case "write":
		lock, unlock, done = m.Lock, m.Unlock, m.Done
	default:
		log.Fatalf("-mode %q: want read or write", *mode)
	}
	log.Printf("waiting for the %s lock", *mode)
	if err := lock(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("holding the %s lock", *mode)
	select {
	case <-time.After(*hold):
	case <-done(): // lost: the session expired
		log.Fatal("lock lost")
	case <-ctx.Done():
	}
	if err := unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("released")
}
