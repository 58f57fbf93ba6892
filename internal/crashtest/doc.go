// Package crashtest holds the multi-process crash test of Zoo's
// durability: a real `zoo server` process is killed with SIGKILL at random
// moments while a client writes, and after each restart every write the
// client saw acknowledged must still be there, sequence numbers must not
// go back, and the ephemerals of sessions that died with the process must
// expire. Unlike the in-process restart tests, nothing here runs a clean
// shutdown: the only state a restart finds is what reached the disk.
//
// The package has no code of its own; the test builds cmd/zoo once in
// TestMain and runs it as a child process. It is skipped with -short.
package crashtest
