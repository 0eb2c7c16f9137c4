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
	s.Frame.ChunkSize = 4096
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{100, 24}} // 96-byte rows, 9600 bytes
	model := make([]byte, 9600)
	for i := range model {
		model[i] = byte(i * 7)
	}
	if err := s.WriteTensor(ctx, "k", meta, model, "none"); err != nil {
		t.Fatal(err)
	}
	rows := tensor.Meta{DType: tensor.Float32, Shape: []int64{80, 24}}
	got := make([]byte, 80*96)
	if err := s.ReadRows(ctx, "k", 10, rows, got); err != nil || !bytes.Equal(got, model[960:960+80*96]) {
		t.Fatalf("rows [10:90): %v", err)
	}
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
