package zk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Connect, create a node, watch it, and react to the change.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, "127.0.0.1:2181/app", zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, _, err = c.Create(ctx, "/config", []byte("v1"), zk.Persistent, zk.OpenACLUnsafe())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		log.Fatal(err)
	}
	data, stat, changed, err := c.GetW(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("config %q, version %d\n", data, stat.Version)

	if _, err := c.Set(ctx, "/config", []byte("v2"), stat.Version); err != nil {
		log.Fatal(err)
	}
	select {
	case ev := <-changed:
		fmt.Println(ev.Type, ev.Path) // NodeDataChanged /config
	case <-c.Done():
		log.Fatal(c.Err())
	}
}

// Asynchronous calls complete in the order they were made, on one
// goroutine.
func ExampleClient_CreateAsync() {
	ctx := context.Background()
	c, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	for i := range 100 {
		err := c.CreateAsync(ctx, "/job-", []byte(fmt.Sprint(i)), zk.PersistentSequential, zk.OpenACLUnsafe(),
			func(path string, _ zk.Stat, err error) {
				if err != nil {
					log.Print(err)
				}
				if i == 99 {
					close(done)
				}
			})
		if err != nil {
			log.Fatal(err)
		}
	}
	<-done
}

// A persistent recursive watch reports every change below a node until it
// is removed or the session ends.
func ExampleClient_AddWatch() {
	ctx := context.Background()
	c, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	events, err := c.AddWatch(ctx, "/services", zk.WatchPersistentRecursive)
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.Err != nil { // the watch ended: session over, or we fell behind
			log.Print(ev.Err)
			break
		}
		fmt.Println(ev.Type, ev.Path)
	}
}
