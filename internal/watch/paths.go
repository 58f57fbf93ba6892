package watch

import "hash/maphash"

// pathID names a watched path in a pathTable. 0 is no path.
type pathID uint32

// pathTable interns the watched paths. Ten million watches on distinct
// znodes is a load Zoo must carry (issue 14), and a table of strings and
// per-path objects there is tens of millions of pointers for the
// collector to mark: at 10M watches a collection took 12-25 s and a
// write cost five times what it did without watches. So a path's bytes
// live in large byte chunks the collector never scans, its record in
// large chunks of records with no pointers (the registry keeps the rare
// paths with several watchers in a side map), and the index from path
// to record is an open-addressed array of ids, each with 32 bits of its
// path's hash so that probing past other paths does not touch their
// records (a write to an unwatched path probes several slots of the
// index on average). Watches cost no heap object each.
//
// The table does not shrink itself: the registry calls rebuild when it
// holds much less than it did (see Registry.compact).
type pathTable struct {
	seed   maphash.Seed
	recs   [][]pathRec // chunks of recChunk records; id i is recs[i/recChunk][i%recChunk]
	free   []pathID    // released ids, reused first
	next   pathID      // ids below next have been handed out (0 is never)
	live   int         // records in use
	index  []slot      // open addressing, linear probing
	names  [][]byte    // path bytes; a record's name points into one chunk
	used   int         // bytes of names in use
	wasted int         // bytes of names whose record was released
}

const (
	recChunk  = 4096
	nameChunk = 64 << 10
	// minIndex is the smallest index; it grows at 3/4 full.
	minIndex = 64
)

// slot is an index entry: the low 32 bits of the path's hash, which
// include its home position, above the id. 0 is an empty slot (ids are
// never 0).
type slot uint64

func makeSlot(h uint64, id pathID) slot { return slot(uint64(uint32(h))<<32 | uint64(id)) }

func (s slot) id() pathID { return pathID(s) }

// home is the slot's first position in an index of mask+1 entries, which
// is at most 1<<32.
func (s slot) home(mask uint64) uint64 { return uint64(s>>32) & mask }

// nameRef locates a path's bytes in pathTable.names.
type nameRef struct {
	chunk, off, n uint32
}

// pathRec is one watched path. It holds no pointers, so that the
// collector never scans the chunks of records.
type pathRec struct {
	hash uint64
	// w and b are the path's one watcher and its registrations, when it
	// has one (one) and not several (many: Registry.many holds them all).
	w    Watcher
	name nameRef
	// in counts the watchers with a registration in each of the tables
	// summaries look at (see tableMasks), so that wchs is O(1).
	in             [len(tableMasks)]uint32
	b              regs
	one, many, use bool // use: the record is in use
}

func (t *pathTable) init() {
	if t.index == nil {
		t.seed = maphash.MakeSeed()
		t.index = make([]slot, minIndex)
		t.next = 1
	}
}

func (t *pathTable) hash(path string) uint64 { return maphash.String(t.seed, path) }

func (t *pathTable) rec(id pathID) *pathRec { return &t.recs[id/recChunk][id%recChunk] }

func (t *pathTable) name(r *pathRec) []byte {
	return t.names[r.name.chunk][r.name.off : r.name.off+r.name.n]
}

// path returns the path of id as a new string.
func (t *pathTable) path(id pathID) string { return string(t.name(t.rec(id))) }

// find returns the id of path, or 0.
func (t *pathTable) find(path string) pathID {
	if t.live == 0 {
		return 0
	}
	h := t.hash(path)
	tag := makeSlot(h, 0)
	mask := uint64(len(t.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.index[i]
		if s == 0 {
			return 0
		}
		if s&^0xffffffff != tag {
			continue
		}
		if r := t.rec(s.id()); r.hash == h && string(t.name(r)) == path {
			return s.id()
		}
	}
}

// add returns the id of path, making a record for it if there is none.
func (t *pathTable) add(path string) pathID {
	if id := t.find(path); id != 0 {
		return id
	}
	t.init()
	if (t.live+1)*4 > len(t.index)*3 {
		t.resize(len(t.index) * 2)
	}
	id := t.alloc()
	r := t.rec(id)
	*r = pathRec{hash: t.hash(path), name: storeName(t, path), use: true}
	t.place(makeSlot(r.hash, id))
	return id
}

// release forgets id; the registry has emptied its record.
func (t *pathTable) release(id pathID) {
	r := t.rec(id)
	mask := uint64(len(t.index) - 1)
	i := r.hash & mask
	for t.index[i].id() != id {
		i = (i + 1) & mask
	}
	// Backward-shift deletion: move later entries of the probe run into
	// the hole, so that no tombstones are needed.
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		home := t.index[j].home(mask)
		// The entry at j may fill the hole at i unless its home lies
		// cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.index[i] = t.index[j]
			i = j
		}
	}
	t.index[i] = 0
	t.used -= int(r.name.n)
	t.wasted += int(r.name.n)
	*r = pathRec{}
	t.free = append(t.free, id)
	t.live--
}

func (t *pathTable) alloc() pathID {
	t.live++
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		return id
	}
	id := t.next
	t.next++
	if int(id/recChunk) == len(t.recs) {
		t.recs = append(t.recs, make([]pathRec, recChunk))
	}
	return id
}

func (t *pathTable) place(s slot) {
	mask := uint64(len(t.index) - 1)
	i := s.home(mask)
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = s
}

func (t *pathTable) resize(n int) {
	old := t.index
	t.index = make([]slot, n)
	for _, s := range old {
		if s != 0 {
			t.place(s)
		}
	}
}

// storeName copies path into the name chunks of t.
func storeName[S string | []byte](t *pathTable, path S) nameRef {
	n := len(path)
	t.used += n
	last := len(t.names) - 1
	if last < 0 || cap(t.names[last])-len(t.names[last]) < n {
		t.names = append(t.names, make([]byte, 0, max(nameChunk, n)))
		last++
	}
	c := t.names[last]
	off := len(c)
	t.names[last] = append(c, path...)
	return nameRef{chunk: uint32(last), off: uint32(off), n: uint32(n)}
}

// each calls f for every record in use.
func (t *pathTable) each(f func(pathID, *pathRec)) {
	for id := pathID(1); id < t.next; id++ {
		if r := t.rec(id); r.use {
			f(id, r)
		}
	}
}

// sparse reports whether the table holds much less than its memory: a
// quarter of its records or less, or names mostly released.
func (t *pathTable) sparse() bool {
	held := int(t.next) - 1
	return (held >= 1024 && t.live*4 <= held) || (t.wasted >= nameChunk && t.wasted > 3*t.used)
}

// rebuild returns a table that holds the records of t in as little
// memory as they need, and the new id of every old one (moved[old]).
func (t *pathTable) rebuild() (*pathTable, []pathID) {
	var n pathTable
	n.init()
	n.seed = t.seed // the records keep their hashes
	for len(n.index)*3 < t.live*4 {
		n.index = make([]slot, len(n.index)*2)
	}
	moved := make([]pathID, t.next)
	t.each(func(old pathID, r *pathRec) {
		id := n.alloc()
		nr := n.rec(id)
		*nr = *r
		nr.name = storeName(&n, t.name(r))
		n.place(makeSlot(nr.hash, id))
		moved[old] = id
	})
	return &n, moved
}
