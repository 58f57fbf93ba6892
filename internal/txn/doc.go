// Package txn turns write requests into idempotent transactions (prep) and
// applies transactions to the replicated state (apply), as Apache
// ZooKeeper 3.8's PrepRequestProcessor and DataTree.processTxn do.
//
// Prep runs on the leader only. It judges a request against the future
// state, the committed tree plus the changes of txns it prepped that are
// not applied yet (Apache's outstanding ChangeRecords), and writes into the
// txn everything apply needs to be deterministic: the final name of a
// sequential node, the parent's new cversion, the new data version, the
// time. A request that fails becomes an ErrorTxn, which is logged like any
// other txn (it consumes a zxid, as in Apache).
//
// Apply runs on every server, in log order, and is total: a txn whose
// preconditions no longer hold (a replay over a fuzzy snapshot) is applied
// the way Apache applies it, and never panics. Applying a log suffix twice
// leaves the state of applying it once (DESIGN decision 3). The zxid is not
// in the txn: it is the raft index of its log entry, passed to Apply
// (DESIGN decision 4).
//
// The encoded form of a Txn (the log format) is
//
//	byte    format version (1)
//	long    session id (Apache's TxnHeader.clientId)
//	int     cxid
//	long    time, ms since the epoch
//	int     type (an opcode; OpError for a failed request)
//	...     the body of that type, in jute (zookeeper.jute module
//	        org.apache.zookeeper.txn), see the *Txn types
//
// Apache's TxnHeader also has the zxid; Zoo's does not.
//
// Nothing here is safe for concurrent use. Prep and Apply read and write
// the same state: the caller runs them on one goroutine or under one lock.
package txn
