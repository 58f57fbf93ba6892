// Command zoo is the Zoo server and its tools.
//
//	zoo server [zoo.cfg]   run a server (no file: standalone on 127.0.0.1:2181)
//	zoo cli [-server h:p] [CMD ARGS...]   the zkCli-style shell
//	zoo snap dump [--json] FILE, zoo log dump [--json] DIR   print snapshots and logs
//	zoo status host:port[,host:port...]   each server's role, term, zxid and lag
//	zoo version            print the version
package main

import (
	"fmt"
	"os"

	"github.com/zoohq/zoo/internal/cli"
)

// Version is the Zoo release; zookeeperVersion is the Apache ZooKeeper
// protocol level Zoo implements, which clients read from envi.
const (
	Version          = "0.1.0"
	zookeeperVersion = "3.9.2"
)

const usage = `usage: zoo <command> [arguments]

commands:
  server [zoo.cfg]   run a server; with no file, standalone on 127.0.0.1:2181
                     with its data in ./zoo-data
  cli [-server host:port] [-timeout ms] [command [args]]
                     the shell, with zkCli.sh's commands; with a command, run
                     it and exit (non-zero on error), else read commands
  status host:port[,host:port...]
                     each server's role, raft term, last zxid, leader, live
                     peer links and (from the leader) each member's lag
  version            print the version
` + dumpUsage

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "server":
		err = runServer(args)
	case "cli":
		os.Exit(cli.Main(args, os.Stdin, os.Stdout, os.Stderr))
	case "snap", "log":
		os.Exit(runDump(cmd, args, os.Stdout, os.Stderr))
	case "status":
		err = runStatus(args, os.Stdout)
	case "bench":
		err = runBench(args)
	case "version", "-version", "--version":
		fmt.Printf("zoo %s (ZooKeeper protocol %s)\n", Version, zookeeperVersion)
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "zoo: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "zoo %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
