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
// started with the format magic, a snapshot-marker record and a HardState
// record that repeat the current state (so purging older segments loses
// nothing), fsynced, then renamed into place and the directory fsynced.
// Open goes on appending to the last segment, just past its last record
// (after cutting a torn tail), in the space preallocated for it: a restart
// costs no new segment, so a crash loop cannot fill the disk. A new
// segment is cut only when a Save does not fit in the active one, or at
// Open when the last segment is in format v1 (below). ReleaseTo removes
// the oldest segments once a snapshot marker covers all their entries.
//
// # Records (format v2)
//
// A v2 segment starts with the 16-byte magic "ZOOW", four zero bytes,
// 0xff, "WAL v2\n"; records follow it, and each other, with no padding.
// Every record is
//
//	+-----------+---------+------+------------+-----------------+-----+
//	| hdrCRC(4) | len (4) | type | dataCRC(4) | payload (len)   | end |
//	+-----------+---------+------+------------+-----------------+-----+
//	             \_ covered by hdrCRC  _____/  \_ by dataCRC _/
//
// with the CRCs (CRC32C, Castagnoli) and len little-endian uint32s and
// end the byte 0xa5. The 13-byte header checks itself, so a damaged
// length is caught as a header checksum mismatch instead of misframing
// the rest of the segment, and a header that checks out gives the
// record's true length. The end mark is never zero, so a record written
// whole ends in a non-zero byte. Framing costs 14 bytes a record (v1:
// 9). Types:
//
//	1 entry                     payload: raftpb.Entry (protobuf)
//	2 hard state                payload: raftpb.HardState (protobuf)
//	3 snapshot marker           payload: raftpb.SnapshotMetadata (index, term, ConfState)
//	4 received snapshot marker  payload: as 3, a leader's snapshot replacing the log
//
// Type 0 is never written, so the zeros of a preallocated tail read as "no
// more records". A Save writes all its records with one Write and makes them
// durable with one Sync (group commit of a raft Ready).
//
// # Recovery: torn tail or corruption
//
// Records are streamed in order, one at a time through a buffered reader,
// until the data ends or a record is bad (a short or zero header, a
// header checksum mismatch, an unknown type, a length that runs past the
// end of the file, a payload checksum mismatch or a missing end mark).
// The preallocated tail is not read: a zero header followed by a window of
// zeros (1 MiB; see zeroWindow for what that gives up) is the clean end of
// the segment, so restart time follows what was written, not how many
// segments were preallocated. A crash keeps a prefix of an unsynced write
// (the rest reads as zeros, or the file ends), never a later part without
// an earlier one. At any other first bad record at offset off:
//
//   - the rest of the segment is zero: the clean end of the segment;
//   - it is the segment's first record (or the magic is damaged): the
//     segment was fsynced before it was renamed into place, so this is
//     corruption; Open fails with a *CorruptionError naming file and
//     offset;
//   - some valid record starts anywhere after off: corruption of data
//     that was fsynced;
//   - its header checks out and the record was written whole: its end
//     mark, or any byte after it, is non-zero: corruption (bit rot in a
//     record that may have been fsynced and acknowledged), even at the
//     very end of the last segment;
//   - its header does not check out and any byte after the header is
//     non-zero: corruption (a record written whole has its end mark
//     there), unless the header's CRC and length fields are all zeros:
//     never written, a flipped bit in zeroed space;
//   - otherwise, in the last segment: a torn tail, the unacknowledged part
//     of a write cut short by a crash (the record ends past the written
//     bytes). Its bytes are kept in "<segment>.broken", the segment is
//     cut at off, and Open goes on;
//   - otherwise (an earlier segment): corruption, since a segment is
//     fsynced before the next one is cut.
//
// So damage to the length of the last synced record, followed by a torn
// unsynced write, is corruption (the header fails and the torn bytes
// follow it), where format v1 took it for a torn tail and cut an
// acknowledged record (internal/sim, seed 6281). A crash that persists a
// later page of an unsynced write but not an earlier one looks like
// corruption by this rule; Open then refuses to start rather than guess
// (the rule errs on the side of never silently dropping acknowledged
// records). Classifying costs one pass over the rest of the segment from
// the bad record (a cheap header test at each offset), once.
//
// Apache ZooKeeper 3.8 does much the same (FileTxnLog.FileTxnIterator.next):
// a record cut short (a zero or partial length, a missing end-of-record
// byte) ends the log, while a checksum mismatch anywhere, the last record
// included, fails the load with "CRC check failed" and the server does not
// start. It has no check for a damaged length, which reads as a short
// record and ends the log. Zoo's end mark plays the part of Apache's
// end-of-record byte; its header checksum is what Apache lacks.
//
// # Entries a snapshot covers
//
// A cut repeats the retained snapshot markers at the head of the new
// segment, so the last segment's head names a snapshot the recovery ends
// at or past. Entries up to it are still read and checked, and their
// indexes counted (for the markers recovery may fall back to), but not
// decoded or kept: a restart after a snapshot does not pay for the log it
// replaced (entryIndex reads the index alone). ReadFrom, which recovers
// from an older snapshot, decodes everything.
//
// # Reading entries back
//
// Save and Open note where each entry's record starts (its segment's
// sequence number and offset). Storage keeps that, 12 bytes an entry,
// for every entry raft may read, and holds only the newest whole
// (Storage.Evict): raft reads the others for a follower that lags, and
// they are read back from their segment (fetch.go), checked as recovery
// checks them, and matched against the index expected there. A segment
// is not released while it holds an entry after the Storage's base
// (Storage.Release). A record that fails its checks is corruption:
// Storage.Err reports it, and raft, which panics on any other error, is
// told the entries are compacted.
//
// # Format v1 and compatibility
//
// Zoo before format v2 wrote segments with no magic and records framed
// CRC32C(len, type, payload) | len | type | payload, one CRC over all. A
// segment's format is known from its first 16 bytes: the magic, or v1.
// Every v1 segment starts with a snapshot-marker record, type 3 at byte
// 8, where the magic has 0xff, so no v1 segment starts with the magic.
// The magic is also chosen for the way back: read by a Zoo before v2, it
// is a v1 header of length 0 whose CRC fails, followed by more bytes, a
// record written whole and damaged, so that version refuses to start
// ("corrupt log ... at offset 0") instead of cutting the segment as a
// torn tail.
//
// Segments of both formats may follow each other in one log. v1 segments
// are read with the v1 decoder and the v1 rule (record_v1.go): without a
// header checksum, a bad record is taken as torn when its claimed length
// runs past the written bytes and no nearby length makes it check out;
// damage to a last record ending in zeros, or to the length of the last
// synced record before a torn write, can be taken as torn there. A v1
// segment is never appended to: when the last segment is v1, Open cuts a
// new v2 segment (once: the next Open finds it last), and the v1 segments
// are released as any others once a snapshot covers their entries.
//
// # Errors
//
// Write and sync errors are sticky: after one, every append returns an error
// wrapping ErrBroken and the first error, and no fsync is retried (after a
// failed fsync the kernel may have dropped the dirty pages, so a retry that
// succeeds proves nothing).
package wal
