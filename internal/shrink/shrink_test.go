package shrink

import (
	"runtime"
	"testing"
)

func TestMapKeepsEntries(t *testing.T) {
	m := map[int]int{}
	var peak int
	for i := range 10000 {
		m[i] = i * 2
	}
	for i := range 9990 {
		delete(m, i)
		m = Map(m, &peak)
	}
	if len(m) != 10 {
		t.Fatalf("len %d, want 10", len(m))
	}
	for i := 9990; i < 10000; i++ {
		if m[i] != 2*i {
			t.Fatalf("m[%d] = %d, want %d", i, m[i], 2*i)
		}
	}
}

// TestMapReturnsMemory is the reason for the package: after a map that
// held many entries is emptied through Map, its memory is collectable.
func TestMapReturnsMemory(t *testing.T) {
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := live()
	m := map[int64][64]byte{}
	var peak int
	for i := range int64(50000) {
		m[i] = [64]byte{}
	}
	full := live()
	for i := range int64(50000) {
		delete(m, i)
		m = Map(m, &peak)
	}
	after := live()
	runtime.KeepAlive(m)
	if grew := full - before; grew < 50000*64 {
		t.Fatalf("the full map measured %d bytes, want at least %d", grew, 50000*64)
	}
	if held := int64(after) - int64(before); held > int64(full-before)/10 {
		t.Errorf("emptied map holds %d bytes; full it held %d", held, full-before)
	}
}

func TestMapLeavesSmallMaps(t *testing.T) {
	m := map[int]bool{1: true, 2: true}
	var peak int
	delete(m, 1)
	m2 := Map(m, &peak)
	m2[3] = true
	if !m[3] {
		t.Fatal("a small map was copied")
	}
}
