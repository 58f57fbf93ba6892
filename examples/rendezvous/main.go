// Command rendezvous is the paper's rendezvous (section 2.4): workers
// wait for a master to publish where it is. Start workers, then a master:
//
//	go run ./examples/rendezvous -server 127.0.0.1:2181 -role worker
//	go run ./examples/rendezvous -server 127.0.0.1:2181 -role master -info 10.0.0.1:9000
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
	p := flag.String("path", "/examples/rendezvous", "rendezvous znode")
	role := flag.String("role", "worker", "worker (waits) or master (fills in)")
	info := flag.String("info", "master at 127.0.0.1:9000", "what the master publishes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := recipe.NewRendezvous(ctx, c, *p, zk.Persistent, nil); err != nil {
		log.Fatal(err)
	}
	if *role == "master" {
		if err := recipe.Fill(ctx, c, *p, []byte(*info)); err != nil {
			log.Fatal(err)
		}
		log.Printf("published %q", *info)
		return
	}
	log.Printf("waiting for the master at %s", *p)
	data, err := recipe.Await(ctx, c, *p)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("the master says: %s", data)
}
