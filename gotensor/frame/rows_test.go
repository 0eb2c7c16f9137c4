package frame

import (
	"bytes"
	"context"
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

// A patch's header is the old header with the coded chunks' entries
// replaced and the checksum sealed again: applied by hand, it gives the
// frame that encoding the edited tensor whole gives, byte for byte, for
// a codec whose chunks change length (zstd on varied rows) and for none.
func TestPatchEqualsTheFrameEncodedWhole(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{64, 32}} // 128-byte rows
	n, _ := meta.NumBytes()
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i * i >> 5)
	}
	for _, spec := range []string{"none", "zstd"} {
		opt := Options{ChunkSize: MinChunkSize, AlignRows: true} // 4 KiB chunks: 32 rows each
		f, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(f, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Header.Chunks) < 2 {
			t.Fatalf("%s: %d chunks, want several", spec, len(r.Header.Chunks))
		}
		rows := make([]byte, 3*128) // rows [30, 33): across the first two chunks' boundary
		for i := range rows {
			rows[i] = byte(7 * i)
		}
		p, err := r.Patch(context.Background(), 30*128, rows, nil)
		if err != nil {
			t.Fatal(err)
		}
		old := f[:r.Header.Size()]
		got := append(append(append([]byte(nil), p.Header(old)...), f[len(old):p.Off]...), p.Data...)
		got = append(got, f[p.Off+p.N:]...)
		edited := append([]byte(nil), raw...)
		copy(edited[30*128:], rows)
		want, err := Encode(meta, edited, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: patched frame (%d bytes) differs from the frame encoded whole (%d bytes)", spec, len(got), len(want))
		}
	}
}
