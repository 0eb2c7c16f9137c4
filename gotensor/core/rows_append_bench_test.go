package core

import (
	"fmt"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// One-row appends to a FlexGen KV cache tensor (287 rows of 48x64
// float32, codec none) and reads of half its rows, per store and layout.
func BenchmarkKVAppend(b *testing.B) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{287, 48, 64}}
	n, _ := meta.NumBytes()
	row := tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 48, 64}}
	rn, _ := row.NumBytes()
	raw := make([]byte, n)
	for _, layout := range []int64{0, 1} { // the store's chunks, chunks of one row
		for _, url := range []string{"mem://", "file://" + b.TempDir() + "?fsync=false"} {
			s, err := Open(url)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.WriteTensor(WithChunkRows(ctx, layout), "k", meta, raw, "none"); err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("%s/chunk-rows=%d", url[:4], layout)
			b.Run("append/"+name, func(b *testing.B) {
				b.SetBytes(rn)
				i := int64(0)
				for b.Loop() {
					if err := s.WriteRows(ctx, "k", i%287, row, raw[:rn]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("read-half/"+name, func(b *testing.B) {
				half := tensor.Meta{DType: tensor.Float32, Shape: []int64{143, 48, 64}}
				b.SetBytes(n / 2)
				for b.Loop() {
					if err := s.ReadRows(ctx, "k", 0, half, raw[:143*rn]); err != nil {
						b.Fatal(err)
					}
				}
			})
			s.Close()
		}
	}
}
