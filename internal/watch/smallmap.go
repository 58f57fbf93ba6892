package watch

// smallMap is a map that keeps its first entry inline and makes a real map
// only for a second one. It holds a watcher's paths: many connections
// watch one path (the waiters of a lock), and then cost no map at all.
// A path's watchers follow the same idea (Registry.set), with the map kept
// outside the path's record so that records hold no pointers.
type smallMap[K comparable, V any] struct {
	k   K
	v   V
	one bool    // k, v hold an entry; only while m == nil
	m   map[K]V // every entry, once there have been two
}

func (s *smallMap[K, V]) get(k K) (V, bool) {
	if s.m != nil {
		v, ok := s.m[k]
		return v, ok
	}
	if s.one && s.k == k {
		return s.v, true
	}
	var zero V
	return zero, false
}

func (s *smallMap[K, V]) set(k K, v V) {
	switch {
	case s.m != nil:
		s.m[k] = v
	case !s.one || s.k == k:
		s.k, s.v, s.one = k, v, true
	default:
		s.m = map[K]V{s.k: s.v, k: v}
		var zk K
		var zv V
		s.k, s.v, s.one = zk, zv, false
	}
}

func (s *smallMap[K, V]) del(k K) {
	if s.m != nil {
		delete(s.m, k)
		if len(s.m) == 0 {
			s.m = nil // a map never shrinks: drop an emptied one
		}
		return
	}
	if s.one && s.k == k {
		var zk K
		var zv V
		s.k, s.v, s.one = zk, zv, false
	}
}

func (s *smallMap[K, V]) len() int {
	if s.m != nil {
		return len(s.m)
	}
	if s.one {
		return 1
	}
	return 0
}

// each calls f for every entry, in no particular order. f may delete the
// entry it is given.
func (s *smallMap[K, V]) each(f func(K, V)) {
	if s.m != nil {
		for k, v := range s.m {
			f(k, v)
		}
		return
	}
	if s.one {
		f(s.k, s.v)
	}
}
