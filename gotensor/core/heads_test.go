package core

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A row write keeps its key's header; a failed one (no such key) keeps
// nothing, and a Delete or a WriteTensor of the key drops it.
func TestHeadsKeptAndDropped(t *testing.T) {
	s, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kept := func() int { s.heads.mu.Lock(); defer s.heads.mu.Unlock(); return len(s.heads.m) }
	row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
	if err := s.WriteRows(ctx, "missing", 0, row, make([]byte, 256)); err == nil {
		t.Fatal("a row write to a missing key")
	}
	if n := kept(); n != 0 {
		t.Fatalf("%d headers kept after a failed write", n)
	}
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{8, 256}}
	for _, drop := range []func() error{
		func() error { return s.Delete(ctx, "kv") },
		func() error { return s.WriteTensor(ctx, "kv", meta, make([]byte, 8*256), "none") },
	} {
		if err := s.WriteTensor(ctx, "kv", meta, make([]byte, 8*256), "none"); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteRows(ctx, "kv", 2, row, make([]byte, 256)); err != nil {
			t.Fatal(err)
		}
		if n := kept(); n != 1 {
			t.Fatalf("%d headers kept after a row write, want 1", n)
		}
		if err := drop(); err != nil {
			t.Fatal(err)
		}
		if n := kept(); n != 0 {
			t.Fatalf("%d headers kept after the key was replaced or deleted", n)
		}
	}
}
