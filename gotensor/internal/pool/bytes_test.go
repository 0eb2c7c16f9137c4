package pool

import "testing"

func TestBytesReusesBySizeAndStaysBounded(t *testing.T) {
	p := NewBytes(10<<20, 2)
	b := p.Get(3 << 20)
	b[0] = 7
	p.Put(b)
	if got := p.Get(3<<20 - 100); &got[0] != &b[0] {
		t.Fatal("a buffer of the same size class was not reused")
	}
	if got := p.Get(3 << 20); got[0] != 0 {
		t.Fatal("the pool was empty: a new buffer must be fresh")
	}
	p.Put(make([]byte, 3<<20))
	if small := p.Get(1 << 20); cap(small) >= 3<<20 {
		t.Fatal("a buffer more than twice the request was lent")
	}
	for range 5 { // beyond perClass and maxBytes
		p.Put(make([]byte, 4<<20))
	}
	if p.Held() > 10<<20 {
		t.Fatalf("pool holds %d bytes, bound is %d", p.Held(), 10<<20)
	}
	p.Put(make([]byte, 64<<20)) // larger than the whole bound
	if p.Held() > 10<<20 {
		t.Fatalf("pool holds %d bytes after an oversized put", p.Held())
	}
}

// With a room, the pool keeps buffers beyond its bound while they fit in
// it, and a new buffer lets go of those that would not fit beside it.
func TestBytesRoom(t *testing.T) {
	p := NewBytes(1<<20, 4)
	room := int64(10 << 20)
	p.SetRoom(func() int64 { return room })
	a, b := p.Get(4<<20), p.Get(4<<20)
	p.Put(a)
	p.Put(b)
	if p.Held() != 8<<20 {
		t.Fatalf("pool holds %d bytes, want both 4 MiB buffers in a room of 10 MiB", p.Held())
	}
	p.Put(make([]byte, 4<<20))
	if p.Held() != 8<<20 {
		t.Fatalf("pool holds %d bytes, beyond its room", p.Held())
	}
	if got := p.Get(4 << 20); &got[0] != &b[0] && &got[0] != &a[0] {
		t.Fatal("an idle buffer was not reused")
	}
	room = 6 << 20
	if got := p.Get(8 << 20); got[0] != 0 || p.Held() != 0 {
		t.Fatalf("pool holds %d bytes beside a new 8 MiB buffer in a room of 6 MiB", p.Held())
	}
	room = 0
	p.Put(make([]byte, 512<<10))
	if p.Held() != 512<<10 {
		t.Fatal("the bound no longer holds without room")
	}
}

func TestBoundedPoolDropsLargeObjects(t *testing.T) {
	p := NewBounded(func() *[]byte { return new([]byte) }, func(b *[]byte) int { return cap(*b) }, 1<<20)
	big := make([]byte, 2<<20)
	p.Put(&big)
	if got := p.Get(); cap(*got) != 0 {
		t.Fatal("an object above the size bound was kept")
	}
	small := make([]byte, 1<<10)
	p.Put(&small)
	if got := p.Get(); cap(*got) != 1<<10 {
		t.Fatal("an object within the bound was dropped")
	}
}

// A rounded buffer, given back, fits any later request of its size class.
func TestGetRoundedFitsItsClass(t *testing.T) {
	p := NewBytes(64<<20, 4)
	b := p.GetRounded(5<<20 + 3)
	if len(b) != 5<<20+3 || cap(b) != 8<<20 {
		t.Fatalf("len %d cap %d, want cap 8 MiB", len(b), cap(b))
	}
	p.Put(b)
	if c := p.GetRounded(7 << 20); &c[0] != &b[0] {
		t.Fatal("a larger request of the class got new memory")
	}
}
