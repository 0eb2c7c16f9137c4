package frame

import (
	"fmt"
	"testing"

	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// go test -bench Codec -run ^$ ./gotensor/frame: single-core and all-core
// speed of each codec on synthetic bfloat16 weights (bench/ measures real ones).
func BenchmarkCodec(b *testing.B) {
	n := 8 << 20 // elements
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(n)}}
	raw := weights(meta.DType, n, 1)
	for _, spec := range []string{"planes", "shuffle-deflate", "deflate", "lz4", "zstd", "q4"} {
		for _, workers := range []int{1, 0} {
			parallel.SetWorkers(workers)
			f, err := Encode(meta, raw, spec, Options{})
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("%s/workers=%d", spec, parallel.Workers())
			b.Run(name+"/encode", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				b.ReportMetric(float64(len(raw))/float64(len(f)), "ratio")
				for b.Loop() {
					Encode(meta, raw, spec, Options{})
				}
			})
			dst := make([]byte, len(raw))
			b.Run(name+"/decode", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, err := Decode(ctx, f, dst, DefaultLimits); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	parallel.SetWorkers(0)
}
