package frame

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Row-aligned chunks: short rows are packed whole into chunks of at most
// RowChunkSize; a row longer than that is split into chunks that divide
// it, so every row still starts on a chunk boundary and a large weight
// keeps several chunks to code in parallel.
func TestRowAlignedChunkSizes(t *testing.T) {
	for _, c := range []struct {
		shape []int64
		want  int64
	}{
		{[]int64{4096, 48, 64}, 258048},     // 6 KiB rows: 42 of them
		{[]int64{3, 1 << 20}, RowChunkSize}, // 2 MiB rows: 8 chunks each
	} {
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: c.shape}
		n, _ := meta.NumBytes()
		f, err := Encode(meta, make([]byte, n), "none", Options{AlignRows: true})
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseHeader(f, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		row := n / c.shape[0]
		if int64(h.ChunkSize) != c.want || (row%int64(h.ChunkSize) != 0 && int64(h.ChunkSize)%row != 0) {
			t.Fatalf("%v: chunk %d (row %d), want %d", c.shape, h.ChunkSize, row, c.want)
		}
	}
}
