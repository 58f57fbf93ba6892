// Package snap writes, verifies, lists, loads and purges snapshot files:
// the replicated state (tree and sessions) as of a raft index.
//
// A snapshot is fuzzy (DESIGN decision 9): the replica walks the live tree
// while apply goes on, so the file may hold some effects of txns after its
// index; replaying the log after the index is safe because txns are
// idempotent. This package takes whatever it is fed: Writer is a streaming
// encoder the replica feeds node by node as it walks, and Write is the
// convenience that walks a quiescent txn.State.
//
// # Files
//
// A snapshot at raft index i is the file "snap.<i as 16 hex digits>" in its
// directory, so the newest sorts last. It is written as "<name>.tmp",
// fsynced, renamed into place, and the directory is fsynced; the rename is
// the commit point. A ".tmp" file is what a crash mid-write leaves behind:
// List and Purge ignore them, Load (called at startup) removes them.
//
// # Format (version 1)
//
// Integers in the header and trailer are big-endian; uvarint and varint
// are encoding/binary's (varint is zig-zag). "bytes" is uvarint n+1 then n
// bytes, with 0 meaning nil (the tree tells nil data from empty); "str" is
// uvarint n then n bytes.
//
//	+--------------------------------------------------------------+
//	| header, 40 bytes, never compressed                           |
//	|   magic    [8]byte "ZOOSNAP\x00"                             |
//	|   version  uint32  1                                         |
//	|   flags    uint32  low byte: compression (0 none, 1 gzip,    |
//	|                    2 snappy framed stream)                   |
//	|   index    uint64  raft index the snapshot is labelled with  |
//	|   term     uint64  raft term of that index                   |
//	|   zxid     int64   last zxid applied at the walk's start     |
//	+--------------------------------------------------------------+
//	| body: records, through gzip or snappy if flags say so        |
//	|   'A' uvarint id, uvarint n+1 (0 = nil list),                |
//	|       n × (varint perms, str scheme, str id)                 |
//	|         an ACL list, once, before the first node using it    |
//	|   'N' uvarint shared, str suffix   path = prev[:shared]+suffix|
//	|       bytes data, uvarint aclID,                             |
//	|       varint czxid mzxid ctime mtime version cversion        |
//	|              aversion ephemeralOwner pzxid (StatPersisted)   |
//	|         a znode; its parent comes before it                  |
//	|   'S' varint session id, varint timeout ms, bytes password   |
//	|   'E' uvarint nodes, uvarint acls, uvarint sessions          |
//	|         the end; the counts must match the records           |
//	+--------------------------------------------------------------+
//	| trailer: uint32 CRC-32C (Castagnoli) of every byte before it |
//	|   (header and body as stored, i.e. compressed)               |
//	+--------------------------------------------------------------+
//
// The ACL table follows Apache's snapshot (each distinct list once, nodes
// referring to it by id), except that a definition is written where it is
// first needed rather than up front, so the writer can stream a walk.
// Paths are prefix-compressed against the previous node's path, which a
// depth-first walk makes long.
//
// Both sides stream through a bufio buffer: the writer never holds more
// than one record, and the reader holds the tree it builds and one record.
// The reader bounds every length by MaxLen and grows a buffer only as
// bytes actually arrive, so a lying length cannot make it allocate much.
//
// A file whose checksum does not match is reported with ErrChecksum, even
// if decoding failed first (decoding runs as the bytes stream past, then
// the rest of the file is hashed and compared): a flipped byte anywhere or
// a truncated file is corruption, never a partial tree. ErrMalformed is a
// file whose checksum is right but whose content is not a valid snapshot:
// a bug in the writer.
package snap
