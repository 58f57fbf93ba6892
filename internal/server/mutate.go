package server

// Mutation names a defect planted in the request path for the
// simulator's tests (internal/sim) to prove they catch it. Mutations
// exist only in builds with the simmutate tag; in every other build they
// are off and cost nothing.
type Mutation int

// The planted defects.
const (
	// MutEventsAfterReply queues a change's watch events after the reply
	// to the write that made it, not before (DESIGN decision 7).
	MutEventsAfterReply Mutation = iota + 1
	// MutReadsBeforeWrite answers the reads that waited for a write
	// before the write's own reply (FIFO, DESIGN decision 6).
	MutReadsBeforeWrite
	// MutWatchOnMissingNode has a getData set its watch before it looks
	// the node up, so a getData of a missing node leaves a data watch
	// (Apache sets none: only exists watches a missing node).
	MutWatchOnMissingNode
	// MutSetWatchesForgetsChanges has setWatches take the client's
	// watches as of now, not of the last zxid it saw: a data watch whose
	// node changed while the client was away is registered, not fired.
	MutSetWatchesForgetsChanges
	// MutEndedKeepsConn leaves the connection of a session that was
	// closed or expired open, as if the session lived on.
	MutEndedKeepsConn
	// MutEventsIgnoreACL delivers watch events to watchers that may not
	// read the node.
	MutEventsIgnoreACL
	// MutGetDataSkipsACL answers a getData without checking READ.
	MutGetDataSkipsACL
)
