package core

import (
	"bytes"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A file:// row read of a tensor whose chunk table runs past the first
// 4 KiB (600 chunks) still reads its raw chunks straight into the
// destination, not through the general path.
func TestFileRowReadOfALongChunkTableIsRaw(t *testing.T) {
	s, err := Open("file://" + t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Frame.ChunkSize = 4096
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{600, 1024}} // 4 KiB rows: 600 chunks
	raw := make([]byte, 600*4096)
	for i := range raw {
		raw[i] = byte(i * 13)
	}
	if err := s.WriteTensor(ctx, "k", meta, raw, "none"); err != nil {
		t.Fatal(err)
	}
	want := tensor.Meta{DType: tensor.Float32, Shape: []int64{500, 1024}}
	dst := make([]byte, 500*4096)
	_, handled, err := s.readRowsRaw(ctx, s.caps.Files, "k", 50, want, dst)
	if !handled || err != nil || !bytes.Equal(dst, raw[50*4096:550*4096]) {
		t.Fatalf("handled %v, %v", handled, err)
	}
}
