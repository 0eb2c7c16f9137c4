package core

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Whole-tensor writes and reads of a 2-D weight with chunks of whole rows
// (at most RowChunkSize) and with the size-only default, per codec.
func BenchmarkRowAlignedChunks(b *testing.B) {
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{2048, 4096}}
	n, _ := meta.NumBytes()
	raw := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < len(raw); i += 2 {
		binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
	}
	dst := make([]byte, n)
	for _, align := range []bool{true, false} {
		for _, spec := range []string{"none", "planes"} {
			s, _ := Open("mem://")
			s.Frame.AlignRows = align
			name := spec + map[bool]string{true: "/rows", false: "/size"}[align]
			b.Run("write/"+name, func(b *testing.B) {
				b.SetBytes(n)
				for b.Loop() {
					if err := s.WriteTensor(ctx, "k", meta, raw, spec); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("read/"+name, func(b *testing.B) {
				b.SetBytes(n)
				for b.Loop() {
					if err := s.ReadTensor(ctx, "k", meta, dst); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
