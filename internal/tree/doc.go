// Package tree is Zoo's data tree: the znodes, their data, ACLs and stat,
// kept the way Apache ZooKeeper 3.8's DataTree keeps them, so that every
// number a client reads (versions, cversion, zxids, sequence suffixes)
// is the number Apache would report.
//
// The design follows DataTree: a flat index from full path to node gives
// O(1) lookups, and each node lists its children. Their memory is shaped
// for Go's collector (node.go): nodes in a slab named by uint32 ids, their
// names and data as records in large chunks (bufs.go), children as a list
// of ids, and a path index that holds no pointers: the collector traces
// none of it. ACL lists are interned
// in a reference-counted table (Apache's ReferenceCountedACLCache), so a
// million nodes with one ACL share one slice. Side indexes list the
// ephemerals of each session, the container nodes and the TTL nodes.
//
// The stat kept per node is Apache's StatPersisted. Two reported fields
// are derived, as in DataNode.copyStat:
//
//	cversion reported = stored cversion*2 - numChildren
//	    (the stored cversion counts creates only; every child that is gone
//	    was deleted once, so this counts creates plus deletes)
//	ephemeralOwner reported = 0 for container and TTL nodes, which store
//	    special owner values (see ContainerOwner and TTLOwner)
//
// A Tree is not safe for concurrent use. It has one writer (the apply
// loop); the server guards reads with its own lock. Methods never log,
// never read the clock and never start goroutines: time is passed in.
//
// Write methods take the values a txn carries (zxid, time, versions) and
// apply them idempotently where Apache does, so that replaying a log
// suffix over a fuzzy snapshot converges (DESIGN decision 9):
// CreateNode raises the parent's cversion and pzxid only if the txn's
// values are greater, and DeleteNode raises the parent's pzxid only if the
// zxid is greater.
//
// Errors are jute.Code values (jute.NoNode, jute.NodeExists,
// jute.BadArguments), which the server turns into wire codes with
// errors.As.
package tree
