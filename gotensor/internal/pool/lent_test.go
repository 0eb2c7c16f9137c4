package pool

import (
	"testing"
	"unsafe"
)

// Only what was lent goes back; a forgotten buffer never does.
func TestLentTakesBackOnlyItsOwn(t *testing.T) {
	p := NewBytes(1<<20, 4)
	l := NewLent(p)
	same := func(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }
	a := l.Get(4096)
	l.Back(a)
	if b := l.Get(4096); !same(a, b) {
		t.Error("a buffer given back was not lent again")
	}
	own := make([]byte, 4096)
	l.Back(own)
	if b := l.Get(4096); same(b, own) {
		t.Fatal("a caller's own buffer was lent")
	}
	c := l.Get(4096)
	if !l.Forget(c) || l.Forget(c) {
		t.Fatal("Forget: lent once, forgotten once")
	}
	l.Back(c)
	if d := l.Get(4096); same(d, c) {
		t.Fatal("a forgotten buffer was lent again")
	}
}
