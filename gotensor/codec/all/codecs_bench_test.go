package all_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	_ "github.com/gotensor/gotensor/gotensor/codec/all"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// BenchmarkCodecReal codes the real weight sets (testweights.Sets:
// stories260K, and those GOTENSOR_WEIGHTS names) with each codec, whole
// tensors on one core as frames code them (frame.Encode and Decode,
// default chunks, checksums included), in MB per second of the benchmark
// thread's CPU time (steadier than wall time on a shared machine: each
// sub-benchmark locks its goroutine to its thread). GOTENSOR_CODECS (comma separated)
// narrows the codecs. The codec packages' READMEs measure their kernels
// with it: this build against -tags noasm (benchstat).
func BenchmarkCodecReal(b *testing.B) {
	names, sets := testweights.Sets(b)
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	specs := []string{"planes", "shuffle-deflate", "deflate", "zstd", "shuffle-zstd", "q4", "q8"}
	if s := os.Getenv("GOTENSOR_CODECS"); s != "" {
		specs = strings.Split(s, ",")
	}
	for _, set := range names {
		w := sets[set]
		for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
			src := testweights.As(w, d)
			for _, spec := range specs {
				meta := tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}
				enc, err := frame.Encode(meta, src, spec, frame.Options{})
				if err != nil {
					b.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/%s", set, strings.ReplaceAll(spec, ":", "_"), d)
				b.Run(name+"/encode", func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(len(src)))
					cpu := testweights.ThreadCPU()
					for b.Loop() {
						if _, err := frame.Encode(meta, src, spec, frame.Options{}); err != nil {
							b.Fatal(err)
						}
					}
					testweights.ReportCPU(b, cpu, len(src))
					b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
				})
				dst := make([]byte, len(src))
				b.Run(name+"/decode", func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(len(src)))
					cpu := testweights.ThreadCPU()
					for b.Loop() {
						if _, err := frame.Decode(context.Background(), enc, dst, frame.DefaultLimits); err != nil {
							b.Fatal(err)
						}
					}
					testweights.ReportCPU(b, cpu, len(src))
				})
			}
		}
	}
}
