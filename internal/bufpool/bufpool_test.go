package bufpool

import "testing"

func TestClass(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{0, -1}, {4095, -1}, {4096, 0}, {4097, 1}, {8192, 1}, {100 << 10, 5}, {1 << 20, 8}, {4 << 20, 10}, {4<<20 + 1, -1},
	} {
		if got := class(tc.n); got != tc.class {
			t.Errorf("class(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
}

func TestGetPut(t *testing.T) {
	if Get(100) != nil || Get(5<<20) != nil {
		t.Fatal("Get pooled a size outside the classes")
	}
	p := Get(5000)
	if p == nil || len(*p) != 5000 || cap(*p) != 8192 {
		t.Fatalf("Get(5000): %v", p)
	}
	Put(p)
	// Whatever Get returns next has the asked length and its class's capacity.
	q := Get(6000)
	if len(*q) != 6000 || cap(*q) != 8192 {
		t.Fatalf("Get(6000) after Put: len %d cap %d", len(*q), cap(*q))
	}
	// A buffer of another capacity is not taken: it would serve sizes it
	// cannot hold.
	odd := make([]byte, 0, 5000)
	Put(&odd)
	Put(nil)
	for range 10 {
		if r := Get(8000); cap(*r) != 8192 {
			t.Fatalf("Get(8000) returned a buffer of capacity %d", cap(*r))
		}
	}
}
