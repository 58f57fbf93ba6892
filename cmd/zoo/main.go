// Command zoo is the Zoo server and its tools.
//
//	zoo server [zoo.cfg]   run a server (no file: standalone on 127.0.0.1:2181)
//	zoo cli [-server h:p] [CMD ARGS...]   the zkCli-style shell
//	zoo snap dump [--json] FILE, zoo log dump [--json] DIR   print snapshots and logs
//	zoo status host:port[,host:port...]   each server's role, term, zxid and lag
//	zoo version            print the version
//	zoo docker-entrypoint  configure from ZOO_* variables, then serve
//	zoo healthcheck [h:p]  exit 0 if the server is serving
package main

import (
	"fmt"
	"os"

	"github.com/zoohq/zoo/internal/cli"
)

// zookeeperVersion is the Apache ZooKeeper protocol level Zoo implements,
// which clients read from envi; Version (version.go) is Zoo's release.
const zookeeperVersion = "3.9.2"

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
  import [-config zoo.cfg] APACHE_DATADIR [APACHE_DATALOGDIR] ZOO_DATADIR
                     convert an Apache ZooKeeper data directory to Zoo's
  export [-compression gz|snappy] ZOO_DATADIR APACHE_DATADIR
                     write a stopped Zoo data directory as an Apache 3.8 one
  backup (-datadir DIR | -url URL) OUT
                     back up a running server's data (snapshot + log tail)
  restore [-to-zxid Z | -to-time T] BACKUP DATADIR
                     write a data directory from a backup, to a point in time
  bench mix|create-delete|barrier|fill [flags]
                     the paper's workloads against any ZooKeeper servers:
                     throughput, latency percentiles, server CPU per op,
                     JSON and SVG (zoo bench WORKLOAD -h for its flags)
  version            print the version
  docker-entrypoint [server flags]
                     write zoo.cfg and myid from the official zookeeper
                     image's ZOO_* variables (unless they exist), then serve
  healthcheck [host:port]
                     exit 0 if the server (default 127.0.0.1:2181) is serving
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
	case "import":
		err = runImport(args, os.Stdout, os.Stderr)
	case "export":
		err = runExport(args, os.Stdout, os.Stderr)
	case "backup":
		err = runBackup(args, os.Stdout, os.Stderr)
	case "restore":
		err = runRestore(args, os.Stdout, os.Stderr)
	case "bench":
		err = runBench(args)
	case "version", "-version", "--version":
		err = runVersion(args, os.Stdout)
	case "docker-entrypoint":
		err = runDockerEntrypoint(args, os.Stderr)
	case "healthcheck":
		err = runHealthcheck(args, os.Stdout)
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
