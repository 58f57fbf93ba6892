package replica

// Mutation names a defect planted in the replica for the simulator's
// tests (internal/sim) to prove they catch it. Mutations exist only in
// builds with the simmutate tag; in every other build they are off and
// cost nothing.
type Mutation int

// The planted defects.
const (
	// MutAckBeforeFsync writes the log without fsync, so a crash loses
	// entries already acknowledged.
	MutAckBeforeFsync Mutation = iota + 1
	// MutNoGapRule keeps a lost forward waiting when a later seq of the
	// same origin applies, breaking the session's FIFO order.
	MutNoGapRule
	// MutApplyOutOfOrder applies two committed entries in swapped order.
	MutApplyOutOfOrder
	// MutSyncSkipsReadIndex answers a sync without waiting for the
	// leader's commit index to be applied.
	MutSyncSkipsReadIndex
	// MutExpiryOnOneMember applies closeSession on member 1 only.
	MutExpiryOnOneMember
)
