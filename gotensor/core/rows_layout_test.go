package core_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A tensor written under WithChunkRows(1) has chunks of one row: a
// one-row write encodes that row only, reads of many rows come out right
// on every store (file:// reading runs of small chunks at once), and a
// flipped byte in one of those chunks is still CorruptData.
func TestChunkRowsLayOutOneRowPerChunk(t *testing.T) {
	ctx := context.Background()
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{300, 8, 160}} // 5120-byte rows
	const row = 5120
	model := make([]byte, 300*row)
	for i := range model {
		model[i] = byte(i*7 + i/row)
	}
	dir := t.TempDir()
	fs := mustOpen(t, "file://"+dir+"/one")
	for _, s := range append(rowStores(t), fs) {
		if err := s.WriteTensor(core.WithChunkRows(ctx, 1), "kv", meta, model, "none"); err != nil {
			t.Fatal(err)
		}
		st, err := s.Stat(ctx, "kv")
		if err != nil || st.Chunks != 300 {
			t.Fatalf("%s: %v chunks, want one per row: %v", s.URL(), st, err)
		}
		one := tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 8, 160}}
		patch := bytes.Repeat([]byte{0x5A}, row)
		before := frame.Work.Encoded.Load()
		if err := s.WriteRows(ctx, "kv", 77, one, patch); err != nil {
			t.Fatal(err)
		}
		if got := frame.Work.Encoded.Load() - before; got != row {
			t.Fatalf("%s: a one-row write encoded %d bytes, want %d", s.URL(), got, row)
		}
		want := append([]byte(nil), model...)
		copy(want[77*row:], patch)
		for _, r := range [][2]int64{{0, 300}, {3, 290}, {76, 79}, {120, 121}} {
			got := make([]byte, (r[1]-r[0])*row)
			m := tensor.Meta{DType: tensor.Float32, Shape: []int64{r[1] - r[0], 8, 160}}
			if err := s.ReadRows(ctx, "kv", r[0], m, got); err != nil || !bytes.Equal(got, want[r[0]*row:r[1]*row]) {
				t.Fatalf("%s: rows %v: %v", s.URL(), r, err)
			}
		}
	}
	path := filepath.Join(dir, "one", "kv.gtf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-300*row+200*row+17] ^= 1 // in row 200's chunk
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 290*row)
	m := tensor.Meta{DType: tensor.Float32, Shape: []int64{290, 8, 160}}
	if err := fs.ReadRows(ctx, "kv", 3, m, got); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("a corrupt small chunk: %v", err)
	}
}

func mustOpen(t *testing.T, url string) *core.Store {
	t.Helper()
	s, err := core.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Row layouts tell the store their frames will be edited in place.
func TestChunkRowsMarkRowEdits(t *testing.T) {
	ctx := context.Background()
	if !store.RowEdits(core.WithChunkRows(ctx, 1)) {
		t.Fatal("WithChunkRows(1) does not mark row edits")
	}
	if store.RowEdits(core.WithChunkRows(ctx, 0)) || store.RowEdits(ctx) {
		t.Fatal("row edits marked without a row layout")
	}
}
