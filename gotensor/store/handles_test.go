package store

import (
	"context"
	"fmt"
	"testing"
)

// A cached handle never outlives its file: ranged reads after a Put, a
// rewriting splice or a Delete see the new state, a reader holding a frame
// open across a replace still reads the old frame whole, and the cache
// stays within maxHandles.
func TestDirHandlesFollowReplace(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	read := func(key string) string {
		b, _, err := d.GetRange(ctx, key, 0, 100)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	d.Put(ctx, "k", []byte("HDR0aaaa"))
	if got := read("k"); got != "HDR0aaaa" {
		t.Fatal(got)
	}
	r, size, done, err := d.OpenFrame(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, "k", []byte("HDR1bbbbbb")) // replaced while open
	old := make([]byte, size)
	if _, err := r.ReadAt(old, 0); err != nil || string(old) != "HDR0aaaa" {
		t.Fatalf("open frame across a replace: %q %v", old, err)
	}
	done()
	if got := read("k"); got != "HDR1bbbbbb" {
		t.Fatalf("after Put: %q", got)
	}
	if ok, err := d.Splice(ctx, "k", []byte("HDR1"), []byte("HDR2"), 4, 6, []byte("cc")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := read("k"); got != "HDR2cc" {
		t.Fatalf("after a rewriting splice: %q", got)
	}
	if ok, err := d.Splice(ctx, "k", []byte("HDR2"), []byte("HDR3"), 4, 2, []byte("dd")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := read("k"); got != "HDR3dd" {
		t.Fatalf("after an in-place splice: %q", got)
	}
	d.Delete(ctx, "k")
	if _, _, err := d.GetRange(ctx, "k", 0, 1); err == nil {
		t.Fatal("read after Delete")
	}
	for i := 0; i < maxHandles+10; i++ {
		k := fmt.Sprint("many", i)
		d.Put(ctx, k, []byte(k))
		if got := read(k); got != k {
			t.Fatal(got)
		}
	}
	d.hmu.Lock()
	n := len(d.handles)
	d.hmu.Unlock()
	if n > maxHandles {
		t.Fatalf("%d handles cached", n)
	}
}

// A range given back (RecycleRange) is the memory of a later GetRange of a
// like size, which reads its own bytes over the old ones.
func TestDirRangesRecycled(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	frame := func(c byte) []byte {
		b := make([]byte, 3*minRecycledRange)
		for i := range b {
			b[i] = c + byte(i%7)
		}
		return b
	}
	d.Put(ctx, "a", frame('a'))
	d.Put(ctx, "b", frame('b'))
	a, _, err := d.GetRange(ctx, "a", 10, 2*minRecycledRange)
	if err != nil || string(a) != string(frame('a')[10:10+2*minRecycledRange]) {
		t.Fatalf("first range: %v", err)
	}
	first := &a[0]
	d.RecycleRange(a)
	b, _, err := d.GetRange(ctx, "b", 20, 2*minRecycledRange-5)
	if err != nil || string(b) != string(frame('b')[20:20+2*minRecycledRange-5]) {
		t.Fatalf("recycled range: %v", err)
	}
	if &b[0] != first {
		t.Fatal("a range of a like size did not reuse the memory given back")
	}
	small, _, _ := d.GetRange(ctx, "b", 0, 100)
	d.RecycleRange(small) // too small to keep: dropped
	if held := dirRanges.Held(); held != 0 {
		t.Fatalf("pool holds %d bytes, want none", held)
	}
}
