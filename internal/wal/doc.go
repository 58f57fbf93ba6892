// Package wal is Zoo's write-ahead log: the raft log, fsynced before a txn is
// acknowledged (DESIGN decision 9). It holds raft entries, HardStates and
// snapshot markers in segment files under one directory, all through a
// vfs.FS so that tests can crash the disk and inject errors.
//
// # Segments
//
// A segment is named "%016x-%016x.wal" from its sequence number and the index
// of the first entry appended after it was cut (all live entries of earlier
// segments are below it, which is what ReleaseTo relies on). A new segment is
// built as "<name>.tmp": preallocated to Options.SegmentSize (zero filled),
// started with a snapshot-marker record and a HardState record that repeat
// the current state (so purging older segments loses nothing), fsynced, then
// renamed into place and the directory fsynced. Open goes on appending to
// the last segment, just past its last record (after cutting a torn tail),
// in the space preallocated for it: a restart costs no new segment, so a
// crash loop cannot fill the disk. A new segment is cut only when a Save
// does not fit in the active one. ReleaseTo removes the oldest segments
// once a snapshot marker covers all their entries.
//
// # Records
//
// Records follow each other with no padding. Every record is
//
//	+----------+----------+------+-------------------+
//	| CRC (4)  | len (4)  | type | payload (len)     |
//	+----------+----------+------+-------------------+
//	 \_ CRC32C  (Castagnoli) of len, type and payload _/
//
// with the CRC and len little-endian uint32s. The CRC covers the length so
// that a damaged length is caught as a checksum mismatch instead of
// misframing the rest of the segment. Types:
//
//	1 entry            payload: raftpb.Entry (protobuf)
//	2 hard state       payload: raftpb.HardState (protobuf)
//	3 snapshot marker  payload: raftpb.SnapshotMetadata (index, term, ConfState)
//
// Type 0 is never written, so the zeros of a preallocated tail read as "no
// more records". A Save writes all its records with one Write and makes them
// durable with one Sync (group commit of a raft Ready).
//
// # Recovery: torn tail or corruption
//
// Records are streamed in order, one at a time through a buffered reader,
// until the data ends or a record is bad (a short or zero header, a length
// that runs past the end of the file, an unknown type, a checksum mismatch).
// The preallocated tail is not read: a zero header followed by a window of
// zeros (1 MiB; see zeroWindow for what that gives up) is the clean end of
// the segment, so restart time follows what was written, not how many
// segments were preallocated. At any other first bad record at offset off,
// the rest of the segment is read:
//
//   - the rest of the file is zero: the clean end of the segment;
//   - some valid record starts anywhere after off: corruption of data that
//     was fsynced; Open fails with a *CorruptionError naming file and offset;
//   - the bad record lies wholly within the written bytes (it ends at or
//     before the last non-zero byte of the segment), or checks out with a
//     length that does: it was written whole and damaged since (bit rot),
//     so it may have been fsynced and acknowledged; corruption, even at
//     the very end of the last segment;
//   - otherwise, in the last segment: a torn tail, the unacknowledged part
//     of a write cut short by a crash (a crash keeps a prefix of an
//     unsynced write; the record claims bytes that were never written).
//     Its bytes are kept in "<segment>.broken", the segment is cut at off,
//     and Open goes on;
//   - otherwise (an earlier segment): corruption, since a segment is
//     fsynced before the next one is cut.
//
// A crash that persists a later page of an unsynced write but not an
// earlier one looks like corruption by this rule; Open then refuses to start
// rather than guess (the rule errs on the side of never silently dropping
// acknowledged records). What it cannot see: damage to a last record whose
// last bytes are zeros, which is what a write that lost them leaves
// (tornRecord).
//
// Apache ZooKeeper 3.8 does much the same (FileTxnLog.FileTxnIterator.next):
// a record cut short (a zero or partial length, a missing end-of-record
// byte) ends the log, while a checksum mismatch anywhere, the last record
// included, fails the load with "CRC check failed" and the server does not
// start. It has no check for a damaged length, which reads as a short
// record and ends the log.
//
// # Errors
//
// Write and sync errors are sticky: after one, every append returns an error
// wrapping ErrBroken and the first error, and no fsync is retried (after a
// failed fsync the kernel may have dropped the dirty pages, so a retry that
// succeeds proves nothing).
package wal
