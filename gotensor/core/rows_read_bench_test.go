package core

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// All the rows of an opt-125m embedding (50272x768 float32, codec none)
// read into a destination, per store: what a FlexGen weight load costs.
func BenchmarkReadAllRows(b *testing.B) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{50272, 768}}
	n, _ := meta.NumBytes()
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	dst := make([]byte, n)
	for _, url := range []string{"mem://", "file://" + b.TempDir() + "?fsync=false"} {
		s, err := Open(url)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.WriteTensor(ctx, "k", meta, raw, "none"); err != nil {
			b.Fatal(err)
		}
		b.Run(url[:4], func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				if err := s.ReadRows(ctx, "k", 0, meta, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}
