package bitio

import (
	"math/rand/v2"
	"testing"
)

// What Writer writes, Reader reads back, through every way of writing.
func TestWriterReader(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type field struct {
		v uint64
		k uint
	}
	var w Writer
	var fields []field
	for i := 0; i < 20000; i++ {
		k := uint(1 + r.IntN(32))
		v := r.Uint64() & (1<<k - 1)
		fields = append(fields, field{v, k})
		switch r.IntN(3) {
		case 0:
			w.Put(uint32(v), k)
		case 1:
			w.Bits(v, k)
			w.Grow(8)
			w.Flush()
		default: // a kernel's way: a state over the buffer
			w.Grow(16)
			st := w.State
			st.Acc |= v << st.N
			st.N += uint64(k)
			st.Store(w.Buf)
			w.State = st
		}
	}
	w.Align()
	rd := Reader{Src: w.Bytes()}
	for i, f := range fields {
		if got := rd.Take(f.k); got != f.v {
			t.Fatalf("field %d: %x, want %x", i, got, f.v)
		}
	}
	if rd.Overrun() || rd.BytePos() != len(w.Bytes()) {
		t.Fatalf("ended at %d of %d (overrun %v)", rd.BytePos(), len(w.Bytes()), rd.Overrun())
	}
	rd.Take(16)
	if !rd.Overrun() {
		t.Fatal("reading past the end is not an overrun")
	}
}

// Append after Align puts the bytes where the stream is.
func TestAppend(t *testing.T) {
	var w Writer
	w.Put(5, 3)
	w.Align()
	w.Append([]byte("ab"))
	w.Put(1, 1)
	w.Align()
	if got := string(w.Bytes()); got != "\x05ab\x01" {
		t.Fatalf("%q", got)
	}
}
