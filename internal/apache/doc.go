// Package apache reads and writes Apache ZooKeeper's on-disk files: the
// snapshots ("snapshot.<zxid>", FileSnap) and transaction logs
// ("log.<zxid>", FileTxnLog) of a version-2 directory, and recovers the
// state they hold as Apache does on start-up (FileTxnSnapLog.restore), so
// that `zoo import` can bring an Apache data directory to Zoo and `zoo
// export` can take it back.
//
// All integers are big-endian, as Java's DataOutputStream writes them.
// jute's "buffer" and "ustring" are an int length (-1 for null) and the
// bytes; a vector is an int count (-1 for null) and its elements.
//
// # Snapshot
//
// The file is a stream, compressed as its suffix says (".gz": gzip;
// ".snappy": snappy-java's SnappyOutputStream, an 8-byte magic
// "\x82SNAPPY\x00", two ints of version, then chunks of int length and a
// raw Snappy block), whose uncompressed bytes are
//
//	FileHeader   int magic "ZKSN", int version 2, long dbid
//	sessions     int count, count × (long id, int timeout ms)
//	ACL cache    int count, count × (long id, vector<ACL>)
//	             ACL = int perms, ustring scheme, ustring id; id -1 is
//	             the open ACL and needs no entry
//	nodes        repeated: ustring path ("" is the root), buffer data,
//	             long ACL id, StatPersisted (long czxid, mzxid, ctime,
//	             mtime; int version, cversion, aversion; long
//	             ephemeralOwner, pzxid); a parent before its children
//	end          ustring "/"
//	seal         long Adler-32 of every byte above, ustring "/"
//	digest       (3.6+) long zxid, int version, long digest (version < 2:
//	             ustring hex digest), then a seal over everything before it
//	last zxid    (3.9+) long lastProcessedZxid, then a seal
//
// Apache takes a snapshot while it applies txns (fuzzy): the file holds
// every txn up to the zxid in its name and perhaps some after; replaying
// the log from the name's zxid on makes it exact, as txns are idempotent.
// The digest, when there is one, is the tree's digest as of its zxid
// (DigestCalculator: the sum of a CRC-32 per node, over its path, data
// and stat, leaving out the nodes under /zookeeper/).
//
// # Transaction log
//
//	FileHeader   int magic "ZKLG", int version 2, long dbid
//	records      long Adler-32 of the txn bytes, buffer txn bytes, byte 'B'
//	             txn bytes: TxnHeader (long clientId, int cxid, long zxid,
//	             long time, int type), the txn record of that type, and
//	             (3.6+) TxnDigest (int version, long tree digest after it)
//	padding      zeros: files are preallocated, so a record with length 0
//	             is the end
//
// A record cut short (its bytes run past the end of the file, or no 'B'
// follows them) is a torn write: the end of that file, as in Apache. A
// checksum that does not match bytes that are all there is corruption.
//
// # Errors
//
// Every error about a file's content wraps ErrCorrupt or ErrUnsupported and
// is a *FileError naming the file and the offset (in the uncompressed
// stream) where reading stopped. Lengths are bounded (Options.MaxLen), and
// buffers grow only as bytes arrive, so a hostile length cannot make a
// reader allocate much.
package apache
