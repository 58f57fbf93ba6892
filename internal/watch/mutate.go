package watch

// Mutation names a defect planted in the registry for the simulator's
// tests (internal/sim) to prove they catch it. Mutations exist only in
// builds with the simmutate tag; in every other build they are off and
// cost nothing.
type Mutation int

// The planted defects.
const (
	// MutChildFiresOnSetData has NodeDataChanged fire child watches too.
	MutChildFiresOnSetData Mutation = iota + 1
	// MutPersistentOnce removes a persistent or recursive watch once it
	// has fired, as if it were one-time.
	MutPersistentOnce
	// MutRecursiveSkipsGrandchildren has a recursive watch fire for its
	// node and its children only, not for nodes deeper down.
	MutRecursiveSkipsGrandchildren
	// MutSetWatchesDropsChildWatches has SetWatches ignore the child
	// watches: neither fired nor registered again.
	MutSetWatchesDropsChildWatches
	// MutSetWatchesDropsPersistent has SetWatches ignore the persistent
	// and recursive watches.
	MutSetWatchesDropsPersistent
	// MutRemoveWholePersistent has a removeWatches of one watcher type
	// take a persistent or recursive watch away whole, not one half.
	MutRemoveWholePersistent
)
