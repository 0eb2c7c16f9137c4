package core_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A file:// row read of raw chunks reads into the destination and still
// checks every chunk it touches: rows spanning partial edge chunks come out
// right, and a flipped byte in one is CorruptData.
func TestFileRowReadOfRawChunksChecksThem(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := core.Open("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, rows, got := writeRowModel(t, s)
	path := filepath.Join(dir, "k.gtf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-9600+5000] ^= 1 // in the second chunk
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadRows(ctx, "k", 10, rows, got); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("corrupt chunk read: %v", err)
	}
}

// writeRowModel writes a 100x24 float32 tensor "k" in 4 KiB raw chunks (96-byte
// rows, edge chunks cut mid-row) and checks a read of rows [10:90) into got:
// the model bytes, the rows' meta and got come back for the test to go on.
func writeRowModel(t *testing.T, s *core.Store) (model []byte, rows tensor.Meta, got []byte) {
	t.Helper()
	ctx := context.Background()
	s.Frame.ChunkSize = 4096
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{100, 24}}
	model = make([]byte, 9600)
	for i := range model {
		model[i] = byte(i * 7)
	}
	if err := s.WriteTensor(ctx, "k", meta, model, "none"); err != nil {
		t.Fatal(err)
	}
	rows = tensor.Meta{DType: tensor.Float32, Shape: []int64{80, 24}}
	got = make([]byte, 80*96)
	if err := s.ReadRows(ctx, "k", 10, rows, got); err != nil || !bytes.Equal(got, model[960:960+80*96]) {
		t.Fatalf("rows [10:90): %v", err)
	}
	return model, rows, got
}
