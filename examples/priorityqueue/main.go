// Command priorityqueue puts items into a distributed priority queue, or
// takes them out most urgent first (lowest -prio; the oldest among
// equals). Fill it, then drain it:
//
//	go run ./examples/priorityqueue -server 127.0.0.1:2181 -put later -prio 5
//	go run ./examples/priorityqueue -server 127.0.0.1:2181 -put urgent -prio 0
//	go run ./examples/priorityqueue -server 127.0.0.1:2181 -take 2   # urgent, then later
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
	dir := flag.String("dir", "/examples/priorityqueue", "queue directory")
	put := flag.String("put", "", "item to put")
	prio := flag.Int("prio", 0, "priority of the item put (0 is the most urgent)")
	take := flag.Int("take", 0, "number of items to take (blocks while the queue is empty)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := recipe.NewPriorityQueue(c, *dir, nil)
	if *put != "" {
		if err := q.Put(ctx, []byte(*put), *prio); err != nil {
			log.Fatal(err)
		}
		log.Printf("put %q with priority %d", *put, *prio)
	}
	for range *take {
		item, err := q.Take(ctx)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("took %q", item)
	}
}
