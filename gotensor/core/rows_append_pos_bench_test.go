package core

import (
	"fmt"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A token's append into a FlexGen KV cache laid out a row per chunk, for
// the plain cache (48x64 float32 per row) and the two tensors of a
// compressed one as FlexGen's TorchCompressedDevice makes them for
// opt-125m at batch 4 (4-bit data 48x32 uint8, scales 48x1x2 float16 per
// row), in a cache of the bench's 287 rows and of 4128, coded none and
// planes (the float tensors). Each iteration appends at the next of the
// cache's last 64 positions, as a generation does: a q4-scales row is 192
// bytes, so a chunk (frame.MinChunkSize) holds ~21 of them and one fixed
// position would sit at a different place in its chunk in each cache.
// What an append costs must not grow with the cache's length (goal: 4128
// rows within 1.5x of 287).
func BenchmarkKVAppendAt(b *testing.B) {
	layouts := []struct {
		name string
		row  tensor.Meta // one row
	}{
		{"plain", tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 48, 64}}},
		{"q4-data", tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 48, 32}}},
		{"q4-scales", tensor.Meta{DType: tensor.Float16, Shape: []int64{1, 48, 1, 2}}},
	}
	const window = 64
	for _, url := range []string{"mem://", "file://" + b.TempDir() + "?fsync=false"} {
		s, err := Open(url)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range layouts {
			for _, codec := range []string{"none", "planes"} {
				if codec == "planes" && l.row.DType == tensor.Uint8 { // planes codes floats
					continue
				}
				for _, rows := range []int64{287, 4128} {
					meta := tensor.Meta{DType: l.row.DType, Shape: append([]int64{rows}, l.row.Shape[1:]...)}
					n, _ := meta.NumBytes()
					rn, _ := l.row.NumBytes()
					raw := make([]byte, n)
					for i := range raw {
						raw[i] = byte(i * 7 >> 3) // something planes codes smaller
					}
					key := fmt.Sprintf("%s-%s-%d", l.name, codec, rows)
					if err := s.WriteTensor(WithChunkRows(ctx, 1), key, meta, raw, codec); err != nil {
						b.Fatal(err)
					}
					b.Run(fmt.Sprintf("%s/%s/%s/rows=%d/end", url[:4], l.name, codec, rows), func(b *testing.B) {
						b.SetBytes(rn)
						i := int64(0)
						for b.Loop() {
							pos := rows - window + i%window
							i++
							if err := s.WriteRows(ctx, key, pos, l.row, raw[:rn]); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
		s.Close()
	}
}
