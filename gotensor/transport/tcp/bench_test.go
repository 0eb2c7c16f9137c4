package tcp_test

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// BenchmarkWriteTensor256MiB: a large tensor through core onto a tcp node
// (streamed in parts; GOTENSOR_STREAM_MIN=off sends it whole).
func BenchmarkWriteTensor256MiB(b *testing.B) {
	_, addr := startServer(b, "", 0)
	s := core.Wrap(dial(b, addr, ""))
	raw := make([]byte, 256<<20)
	for i := range raw {
		raw[i] = byte(i)
	}
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(len(raw))}}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := s.WriteTensor(ctx, "t", meta, raw, "none"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTensor256MiB: read back in ranges decoded as they arrive
// (GOTENSOR_STREAM_MIN=off: one get, then decode).
func BenchmarkReadTensor256MiB(b *testing.B) {
	for _, codec := range []string{"none", "lz4"} {
		b.Run(codec, func(b *testing.B) {
			_, addr := startServer(b, "", 0)
			s := core.Wrap(dial(b, addr, ""))
			raw := make([]byte, 256<<20)
			for i := range raw {
				raw[i] = byte(i / 4096)
			}
			meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(len(raw))}}
			if err := s.WriteTensor(ctx, "t", meta, raw, codec); err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, len(raw))
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if err := s.ReadTensor(ctx, "t", meta, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRoundTrip4KiB: one 4 KiB get at a time from a tcp node.
func BenchmarkRoundTrip4KiB(b *testing.B) {
	_, addr := startServer(b, "", 0)
	c := dial(b, addr, "")
	c.Put(ctx, "k", make([]byte, 4096))
	for b.Loop() {
		if _, err := c.Get(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}
