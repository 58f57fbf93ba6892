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
// The tests are skipped with -short. ZOO_CRASHTEST_BIN names a prebuilt
// zoo binary to run instead of building one.
package crashtest
