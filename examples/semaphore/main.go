// Command semaphore takes one of -n places of a distributed semaphore,
// holds it for a while and releases it. Start more than -n at once: the
// extra ones wait for a place.
//
//	go run ./examples/semaphore -server 127.0.0.1:2181 -n 2 -hold 5s   # in three terminals
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
	dir := flag.String("dir", "/examples/semaphore", "semaphore directory")
	n := flag.Int("n", 2, "number of places (every user of dir must agree on it)")
	hold := flag.Duration("hold", 3*time.Second, "how long to hold the place")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := recipe.NewSemaphore(c, *dir, *n, nil)
	log.Printf("waiting for one of %d places", *n)
	if err := s.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	log.Print("got a place")
	select {
	case <-time.After(*hold):
	case <-s.Done(): // lost: the session expired
		log.Fatal("place lost")
	case <-ctx.Done():
	}
	if err := s.Release(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("released")
}
