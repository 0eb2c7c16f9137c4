package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
)

// A replaced frame's memory is reused only after its last lease ends, and
// never once Get has handed it out.
func TestMemReusesFramesAfterLeases(t *testing.T) {
	ctx := context.Background()
	s := NewMem("mem://", 0)
	a := s.LendFrame(1 << 20)
	for i := range a {
		a[i] = 'a'
	}
	if err := s.Put(ctx, "k", a); err != nil {
		t.Fatal(err)
	}
	got, release, err := s.Lease(ctx, "k")
	if err != nil || &got[0] != &a[0] {
		t.Fatalf("lease: %v", err)
	}
	if err := s.Put(ctx, "k", bytes.Repeat([]byte("b"), 1<<20)); err != nil {
		t.Fatal(err)
	}
	if b := s.LendFrame(1 << 20); &b[0] == &a[0] {
		t.Fatal("a leased frame's memory was lent to a write")
	} else {
		s.ReturnFrame(b)
	}
	if got[0] != 'a' {
		t.Fatal("leased frame changed")
	}
	release()
	var reused bool
	for range 2 { // the pool also holds the buffer handed back above
		if b := s.LendFrame(1<<20 - 10); &b[0] == &a[0] {
			reused = true
		}
	}
	if !reused {
		t.Fatal("a released frame's memory was not reused")
	}

	c := s.LendFrame(1 << 20)
	s.Put(ctx, "g", c)
	s.Get(ctx, "g") // handed out: never reused
	s.Delete(ctx, "g")
	for range 4 {
		if b := s.LendFrame(1 << 20); &b[0] == &c[0] {
			t.Fatal("memory handed out by Get was reused")
		}
	}
	if h, size, err := s.Head(ctx, "k", 4); err != nil || string(h) != "bbbb" || size != 1<<20 {
		t.Fatalf("head: %q %d %v", h, size, err)
	}
}

// A bounded store keeps at most an eighth of its capacity for reuse.
func TestMemPoolBoundedByCapacity(t *testing.T) {
	ctx := context.Background()
	s := NewMem("mem://", 8<<20)
	for range 4 {
		s.Put(ctx, "k", make([]byte, 2<<20))
	}
	if held := s.pool.Held(); held > 1<<20 {
		t.Fatalf("pool holds %d bytes of a 8 MiB store", held)
	}
}

// With an idle room (a node's), a store keeps idle memory for reuse
// within what its capacity leaves free: a replaced frame's memory goes to
// the next write while the store has room for both (beyond the eighth of
// the capacity it keeps otherwise), and is let go as soon as the frames
// stored and a new one need that room.
func TestMemIdleMemoryFitsTheRoom(t *testing.T) {
	ctx := context.Background()
	s := NewMem("mem://", 8<<20)
	s.SetIdleRoom(func(used int64) int64 { return 8<<20 - used })
	for range 4 {
		s.Put(ctx, "k", make([]byte, 2<<20))
		if held := s.pool.Held(); held+s.Used() > 8<<20 {
			t.Fatalf("pool holds %d bytes beside %d stored in a 8 MiB store", held, s.Used())
		}
	}
	a := s.LendFrame(2 << 20)
	s.Put(ctx, "k", a)
	s.Put(ctx, "k", s.LendFrame(2<<20))
	if b := s.LendFrame(2 << 20); &b[0] != &a[0] {
		t.Fatal("a replaced 2 MiB frame of a 8 MiB store was not reused")
	} else {
		s.ReturnFrame(b)
	}
	if err := s.Put(ctx, "other", make([]byte, 4<<20)); err != nil {
		t.Fatal(err)
	}
	s.LendFrame(1 << 20) // new memory: idle buffers that would not fit beside it go
	if held, used := s.pool.Held(), s.Used(); held+used+1<<20 > 8<<20 {
		t.Fatalf("pool holds %d bytes beside %d stored and 1 MiB new in a 8 MiB store", held, used)
	}
}

// A streamed frame assembled for a Mem store is built in memory it lends.
func TestPartsAssembleInLentMemory(t *testing.T) {
	ctx := context.Background()
	s := NewMem("mem://", 0)
	old := s.LendFrame(1 << 20)
	s.Put(ctx, "k", old)
	s.Delete(ctx, "k") // its memory goes to the pool
	p := NewParts(1 << 30)
	p.Add(0, bytes.Repeat([]byte{7}, 1<<20-8))
	f, err := p.FrameIn([]byte("HEADER!!"), s)
	if err != nil || &f[0] != &old[0] || string(f[:8]) != "HEADER!!" || f[len(f)-1] != 7 {
		t.Fatalf("frame not assembled in lent memory (%v)", err)
	}
	q := NewParts(1 << 30)
	q.Add(0, []byte("a"))
	q.Add(2, []byte("b"))
	if _, err := q.FrameIn(nil, s); err == nil {
		t.Fatal("a gap was accepted")
	}
}

// A layer's worth of same-size frames that views may map (a model writes
// dozens of one shape) is reused whole once deleted: the next pass lends
// the same memfd buffers instead of creating new ones, whose pages would
// fault in and be zeroed again.
func TestMemReusesALayersMappableFrames(t *testing.T) {
	if !cowmap.Supported {
		t.Skip("no memfd here")
	}
	ctx := context.Background()
	s := NewMem("mem://", 0)
	defer s.Close()
	const frames, payload = 24, 300 << 10 // MiniLM's 24 attention matrices in bfloat16
	pass := func() {
		for i := range frames {
			b := s.LendMappable(64, payload)
			if err := s.Put(ctx, fmt.Sprint(i), b); err != nil {
				t.Fatal(err)
			}
		}
		for i := range frames {
			s.Delete(ctx, fmt.Sprint(i))
		}
	}
	pass()
	made := s.views.count.Load()
	pass()
	if n := s.views.count.Load(); n != made || made != frames {
		t.Fatalf("%d memfd buffers after the first pass, %d after the second: want %d both times", made, n, frames)
	}
}
