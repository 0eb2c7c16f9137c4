package codec

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// realWeights is the fp32 payload of the stories260K checkpoint (llama2.c:
// a 28-byte header, then the weights), or synthetic weights without it.
func realWeights(b testing.TB) []float32 {
	dir := os.Getenv("GOTENSOR_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "stories260K.bin"))
	if err != nil {
		if b != nil {
			b.Logf("stories260K.bin not found (%v): synthetic weights", err)
		}
		src := bf16Weights(512 << 10)
		out := make([]float32, len(src)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
		return out
	}
	raw = raw[28:]
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// One chunk of real weights per codec and dtype on one core.
func BenchmarkCodecReal(b *testing.B) {
	w := realWeights(b)
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := make([]byte, len(w)*d.Size())
		for i, x := range w {
			storer(d)(src, i, x)
		}
		for _, name := range []string{"planes", "shuffle-deflate", "deflate", "zstd", "q4", "q8"} {
			c, param, err := Parse(name)
			if err != nil {
				b.Fatal(err)
			}
			in := Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}, Param: param}
			enc, aux, err := c.Encode(nil, src, in)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/"+d.String()+"/encode", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				var buf []byte
				for b.Loop() {
					buf, _, _ = c.Encode(buf, src, in)
				}
				b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
			})
			dst := make([]byte, len(src))
			b.Run(name+"/"+d.String()+"/decode", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					if err := c.Decode(dst, enc, in, aux); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
