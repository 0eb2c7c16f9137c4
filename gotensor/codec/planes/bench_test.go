package planes

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

func bf16Weights(n int) []byte { return testweights.NormalBF16(n, 1, 2) }

// One 1 MiB chunk on one core: the per-core speed of the codec itself.
func BenchmarkPlanesChunk(b *testing.B) {
	src := bf16Weights(512 << 10)
	in := codec.Info{Meta: tensor.Meta{DType: tensor.BFloat16, Shape: []int64{512 << 10}}}
	c := planes{}
	enc, _, _ := c.Encode(nil, src, in)
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		var buf []byte
		for b.Loop() {
			buf, _, _ = c.Encode(buf, src, in)
		}
	})
	dst := make([]byte, len(src))
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if err := c.Decode(dst, enc, in, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("split", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		p := newPlanes(2, len(src)/2)
		for b.Loop() {
			shuffle.Split(p, src, 2, true)
		}
	})
	b.Run("merge", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		p := newPlanes(2, len(src)/2)
		for b.Loop() {
			shuffle.Merge(dst, p, 2, true)
		}
	})
}
