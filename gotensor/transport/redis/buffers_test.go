package redis

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

func same(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

// A frame read in pieces lands in memory the store takes back, and the next
// read of its size reuses it, with the new frame's bytes only.
func TestReadsRecycleTheirMemory(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "redis://"+srv.Addr()+"?piece=64KiB")
	a, b := randBytes(1<<20, 1), randBytes(1<<20, 2)
	must(t, s.Put(bg, "k", a))
	got, err := s.Get(bg, "k")
	must(t, err)
	if !bytes.Equal(got, a) {
		t.Fatal("read back other bytes")
	}
	first := got
	s.Caps().Recycler.RecycleRange(got)
	must(t, s.Put(bg, "k", b))
	got, err = s.Get(bg, "k")
	must(t, err)
	if !same(got, first) {
		t.Error("the second read did not reuse the memory the first gave back")
	}
	if !bytes.Equal(got, b) {
		t.Fatal("a read into recycled memory gave other bytes")
	}
	// a range too
	s.RecycleRange(got)
	r, _, err := s.GetRange(bg, "k", 1000, 600<<10)
	must(t, err)
	if !same(r, first) || !bytes.Equal(r, b[1000:1000+600<<10]) {
		t.Error("a range did not reuse the memory, or read other bytes")
	}
	// given back twice, it is reused once: a second give-back is ignored
	s.RecycleRange(r)
	s.RecycleRange(r)
	x, _ := s.Get(bg, "k")
	y, _ := s.Get(bg, "k")
	if same(x, y) {
		t.Fatal("one buffer handed out to two reads")
	}
}

// Only memory the store handed out goes back to its pool: an inline value
// (valkey-go's, behind a string), a caller's own frame, or a read's frame
// written back with Put is never reused under anyone.
func TestOnlyItsOwnMemoryIsRecycled(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "redis://"+srv.Addr()) // 2 MiB pieces: 1 MiB is one inline value
	own := randBytes(1<<20, 3)
	must(t, s.Put(bg, "inline", own))
	v, err := s.Get(bg, "inline")
	must(t, err)
	s.RecycleRange(v)
	s.ReturnFrame(own) // never lent
	for range 3 {
		l := s.LendFrame(1 << 20)
		if same(l, v) || same(l, own) {
			t.Fatal("memory the store did not hand out was lent")
		}
	}
	big := randBytes(3<<20, 4)
	must(t, s.Put(bg, "big", big))
	r, err := s.Get(bg, "big")
	must(t, err)
	keep := bytes.Clone(r)
	must(t, s.Put(bg, "copy", r)) // a read's frame written back: still the caller's
	l := s.LendFrame(3 << 20)
	if same(l, r) {
		t.Fatal("Put took back a read's frame its caller still holds")
	}
	copy(l, make([]byte, len(l)))
	if !bytes.Equal(r, keep) {
		t.Fatal("the caller's frame changed")
	}
}

// A lent frame written goes back for the next; one whose write failed is
// dropped, never lent again (it may still sit in a connection's queue).
func TestLentFramesComeBackOnlyWhenWritten(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "redis://"+srv.Addr()+"?piece=64KiB")
	f := s.LendFrame(1 << 20)
	copy(f, randBytes(1<<20, 5))
	must(t, s.Put(bg, "k", f))
	g := s.LendFrame(1 << 20)
	if !same(f, g) {
		t.Error("a written frame's memory was not lent again")
	}
	got, err := s.Get(bg, "k")
	must(t, err)
	if !bytes.Equal(got, randBytes(1<<20, 5)) {
		t.Fatal("read back other bytes")
	}
	srv.Kill()
	if err := s.Put(bg, "k", g); err == nil {
		t.Fatal("a write to a dead server succeeded")
	}
	s.ReturnFrame(g) // as core does with a refused frame
	if h := s.LendFrame(1 << 20); same(h, g) {
		t.Error("a frame whose write failed was lent again")
	}
}
