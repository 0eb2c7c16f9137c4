package core

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// The whole write and read path on the embedded store, per tensor size.
func BenchmarkWriteReadPlanes(b *testing.B) {
	for _, n := range []int{256 << 10, 16 << 20} {
		r := rand.New(rand.NewPCG(1, 1))
		raw := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
		}
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(n)}}
		s, _ := Open("mem://")
		dst := make([]byte, len(raw))
		for _, w := range []int{1, 0} {
			parallel.SetWorkers(w)
			b.Run("write/"+tensor.FormatShape(meta.Shape)+"/w"+string(rune('0'+parallel.Workers())), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if err := s.WriteTensor(ctx, "k", meta, raw, "planes"); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("read/"+tensor.FormatShape(meta.Shape)+"/w"+string(rune('0'+parallel.Workers())), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if err := s.ReadTensor(ctx, "k", meta, dst); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		parallel.SetWorkers(0)
	}
}
