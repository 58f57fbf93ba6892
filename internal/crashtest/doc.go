// Package crashtest holds Zoo's multi-process tests: real `zoo server`
// processes, built from cmd/zoo once in TestMain and run as children, are
// hurt the way production hurts them, and nothing here runs a clean
// shutdown.
//
// A standalone server is killed with SIGKILL at random moments while a
// client writes; after each restart every write the client saw
// acknowledged must still be there, sequence numbers must not go back,
// and the ephemerals of sessions that died with the process must expire.
//
// A three-member ensemble, configured from zoo.cfg files on loopback
// ports, loses its leader to kill -9, SIGSTOP, or a partition (its peer
// connections go through zktest.Link forwarders that the test cuts) under
// write load: clients must fail over, writes resume, the old leader
// rejoins and catches up, and every acknowledged write is on every member.
// A linearizability test records a history of conditional setData and
// sync+getData calls from several clients across all three faults and
// checks it with porcupine.
//
// TestRandomSchedules (issue 13) runs seeded random fault schedules on a
// linked 3-member ensemble under create and setData/sync+get load: kill -9
// and restart, SIGSTOP and SIGCONT after a random pause, isolation from
// both peers, a one-way cut of one peer link, and a full disk (a ballast
// file on the member's own tmpfs dataDir; left out, with a log line, when
// the test cannot mount one, i.e. is not root). After each schedule it
// heals everything and checks that writes resume, every acknowledged
// create is on every member, the members' hash digests agree, and porcupine
// accepts the history. It logs each schedule's seed and faults, and on a
// failure the command that reruns it. It is long and runs only when asked:
//
//	go test ./internal/crashtest -run TestRandomSchedules -timeout 0 -v \
//	    -chaos.schedules=20 [-chaos.seed=S] [-chaos.duration=30s]
//
// (or ZOO_CHAOS=1 for three schedules); schedule i uses seed S+i.
//
// The tests are skipped with -short. ZOO_CRASHTEST_BIN names a prebuilt
// zoo binary to run instead of building one.
package crashtest
