// Command counter adds to a shared counter (one znode, updated by
// compare-and-set on its version) and prints the new value. Run several
// at once: no increment is lost.
//
//	go run ./examples/counter -server 127.0.0.1:2181 -add 1 -times 100
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
	p := flag.String("path", "/examples/counter", "counter znode")
	add := flag.Int64("add", 1, "amount to add each time")
	times := flag.Int("times", 1, "how many additions to make")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	k := recipe.NewCounter(c, *p, nil)
	var v int64
	for range *times {
		if v, err = k.Add(ctx, *add); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("added %d x %d; counter is now %d", *times, *add, v)
}
