package store

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"testing"
)

type sizes struct {
	bytes.Buffer
	n []int
}

func (s *sizes) Write(b []byte) (int, error) { s.n = append(s.n, len(b)); return s.Buffer.Write(b) }

func TestWriteInGrain(t *testing.T) {
	b := make([]byte, 2*EditGrain+5)
	for i := range b {
		b[i] = byte(i * 31)
	}
	for _, c := range []struct {
		grain int
		want  []int
	}{{0, []int{len(b)}}, {EditGrain, []int{EditGrain, EditGrain, 5}}} {
		var w sizes
		if err := writeIn(&w, b, c.grain); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Bytes(), b) || len(w.n) != len(c.want) {
			t.Fatalf("grain %d: writes %v, want %v", c.grain, w.n, c.want)
		}
		for i := range c.want {
			if w.n[i] != c.want[i] {
				t.Fatalf("grain %d: writes %v, want %v", c.grain, w.n, c.want)
			}
		}
	}
}

// A frame put WithRowEdits (written in pieces) reads back whole.
func TestDirPutRowEdits(t *testing.T) {
	d, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := WithRowEdits(context.Background())
	if !RowEdits(ctx) || RowEdits(context.Background()) {
		t.Fatal("RowEdits does not report WithRowEdits")
	}
	b := make([]byte, 3*EditGrain+17)
	for i := range b {
		b[i] = byte(i * 7)
	}
	if err := d.Put(ctx, "kv", b); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get(ctx, "kv")
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(b))
	}
}

// Dir.Put writes a frame put WithRowEdits in writes of at most EditGrain,
// any other in one.
func TestDirPutWritesInGrains(t *testing.T) {
	var seen []int
	defer func(w func(*os.File) io.Writer) { putWriter = w }(putWriter)
	putWriter = func(f *os.File) io.Writer { return sizeWatch{f, &seen} }
	d, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := make([]byte, 3*EditGrain+17)
	for _, c := range []struct {
		ctx  context.Context
		want []int
	}{
		{context.Background(), []int{len(b)}},
		{WithRowEdits(context.Background()), []int{EditGrain, EditGrain, EditGrain, 17}},
	} {
		seen = nil
		if err := d.Put(c.ctx, "kv", b); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seen, c.want) {
			t.Errorf("row edits %v: writes of %v bytes, want %v", RowEdits(c.ctx), seen, c.want)
		}
	}
}

type sizeWatch struct {
	w io.Writer
	n *[]int
}

func (s sizeWatch) Write(b []byte) (int, error) { *s.n = append(*s.n, len(b)); return s.w.Write(b) }
