package core

import (
	"bytes"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// The mem:// data path beside what the machine does with plain memory, in
// the same run: copy (memcpy), clone (make+copy, what a tensor clone costs),
// and the round trip of two copies.
//
//	go test -run - -bench MemPath -benchtime 20x ./gotensor/core
func BenchmarkMemPath(b *testing.B) {
	for _, n := range []int{256 << 20, 1 << 10} {
		raw := weights(n / 2)
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(n / 2)}}
		dst := make([]byte, n)
		size := "/" + tensor.FormatShape([]int64{int64(n)})
		b.Run("copy"+size, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, raw)
			}
		})
		b.Run("clone"+size, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink = bytes.Clone(raw)
			}
			sink = nil
		})
		s, _ := Open("mem://")
		b.Run("write"+size, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := s.WriteTensor(ctx, "k", meta, raw, "none"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read"+size, func(b *testing.B) {
			if err := s.WriteTensor(ctx, "k", meta, raw, "none"); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := s.ReadTensor(ctx, "k", meta, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("writeread"+size, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := s.WriteTensor(ctx, "k", meta, raw, "none"); err != nil {
					b.Fatal(err)
				}
				if err := s.ReadTensor(ctx, "k", meta, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

var sink []byte
