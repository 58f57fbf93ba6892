// Command discovery registers an instance of a service the way Curator's
// ServiceDiscovery does, lists the service's instances (Java ones too),
// and stays registered until ^C.
//
//	go run ./examples/discovery -server 127.0.0.1:2181 -name api -address 10.0.0.1 -port 8080
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

// connect opens a session on -server and stops on ^C.
func connect(server string) (context.Context, *zk.Client, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	c, err := zk.Connect(ctx, server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	return ctx, c, func() { _ = c.Close(); stop() }
}

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address")
	base := flag.String("base", "/examples/services", "discovery base path")
	name := flag.String("name", "api", "service name")
	address := flag.String("address", "127.0.0.1", "this instance's address")
	port := flag.Int("port", 8080, "this instance's port")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	d := recipe.NewServiceDiscovery(c, *base, nil)
	inst := recipe.NewServiceInstance(*name, *address, *port)
	inst.UriSpec = recipe.ParseUriSpec("{scheme}://{address}:{port}")
	if err := d.RegisterService(ctx, inst); err != nil {
		log.Fatal(err)
	}
	log.Printf("registered %s/%s/%s", *base, *name, inst.ID)
	all, err := d.QueryForInstances(ctx, *name)
	if err != nil {
		log.Fatal(err)
	}
	for _, i := range all {
		log.Printf("instance %s at %s:%d", i.ID, i.Address, *i.Port)
	}
	<-ctx.Done()
	if err := d.Close(context.Background()); err != nil {
		log.Print(err)
	}
}
