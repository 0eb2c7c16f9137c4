package quant

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// q4 and q8 on one core per dtype, on the real weights seen as a 1-d
// tensor (whole groups of a row, what bench_codecs.py measures) and as
// 512 columns grouped along the rows (FlexGen's weight layout: tiles), at
// each kernel level this CPU has.
//
//	go test -run - -bench Quant ./gotensor/codec
func BenchmarkQuant(b *testing.B) {
	w := testweights.Real(b)
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	for _, lv := range kernelLevels {
		if lv.avx && !cpuKernels.avx2 || lv.sse && !cpuKernels.sse {
			continue
		}
		for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
			for _, layout := range []string{"rows", "tiles"} {
				shape, dim := []int64{int64(len(w))}, 0
				if layout == "tiles" {
					shape = []int64{int64(len(w) / 512), 512}
				}
				n := int(shape[0])
				if len(shape) == 2 {
					n *= int(shape[1])
				}
				src := make([]byte, n*d.Size())
				for i, x := range w[:n] {
					storer(d)(src, i, x)
				}
				for _, name := range []string{"q4", "q8"} {
					c, _ := codec.ByName(name)
					p := c.(codec.Parametric).DefaultParam() | uint32(uint8(int8(dim)))<<16
					in := codec.Info{Meta: tensor.Meta{DType: d, Shape: shape}, Param: p}
					prefix := lv.name + "/" + name + "/" + d.String() + "/" + layout
					b.Run(prefix+"/encode", func(b *testing.B) {
						useKernels(b, lv.sse, lv.avx)
						b.SetBytes(int64(len(src)))
						var buf []byte
						for b.Loop() {
							buf, _, _ = c.Encode(buf, src, in)
						}
					})
					b.Run(prefix+"/decode", func(b *testing.B) {
						useKernels(b, lv.sse, lv.avx)
						enc, _, err := c.Encode(nil, src, in)
						if err != nil || len(enc) >= len(src) {
							b.Fatalf("encode: %v (%d of %d bytes)", err, len(enc), len(src))
						}
						dst := make([]byte, len(src))
						b.SetBytes(int64(len(src)))
						for b.Loop() {
							if err := c.Decode(dst, enc, in, 0); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}
