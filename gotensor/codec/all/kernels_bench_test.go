package all_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/internal/kernels"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// kernelsOf are the kernel groups (internal/kernels) each codec runs.
var kernelsOf = map[string][]string{
	"planes":                    {"shuffle.ssse3", "shuffle.avx2", "planes.bmi2"},
	"shuffle-deflate":           {"shuffle.ssse3", "shuffle.avx2", "adler32.avx2", "deflate.merge-adler-avx2", "deflate.bmi2"},
	"shuffle-deflate:streams=1": {"shuffle.ssse3", "shuffle.avx2", "adler32.avx2", "deflate.bmi2"},
	"deflate":                   {"adler32.avx2"},
	"shuffle-zstd":              {"shuffle.ssse3", "shuffle.avx2"},
	"q4":                        {"quant.ssse3", "quant.avx2", "quant.f16c"},
	"q8":                        {"quant.ssse3", "quant.avx2", "quant.f16c"},
}

// BenchmarkKernels is BenchmarkCodecReal with every kernel on
// (kernels=all) and with each kernel group a codec runs turned off alone
// (kernels=-NAME), one after another (-count repeats the round, so that a
// shared machine's drift falls on all alike): the end-to-end measurement
// each kernel is held to (the codec packages' READMEs). GOTENSOR_CODECS
// narrows the codecs; compare with benchstat -col /kernels.
func BenchmarkKernels(b *testing.B) {
	names, sets := testweights.Sets(b)
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	specs := []string{"planes", "shuffle-deflate", "shuffle-deflate:streams=1", "deflate", "shuffle-zstd", "q4", "q8"}
	if s := os.Getenv("GOTENSOR_CODECS"); s != "" {
		specs = strings.Split(s, ",")
	}
	have := map[string]bool{}
	for _, k := range kernels.Names() {
		have[k] = true
	}
	for _, set := range names {
		w := sets[set]
		for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
			src := testweights.As(w, d)
			meta := tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}
			for _, spec := range specs {
				variants := []string{"all"}
				for _, k := range kernelsOf[spec] {
					if have[k] {
						variants = append(variants, "-"+k)
					}
				}
				enc, err := frame.Encode(meta, src, spec, frame.Options{})
				if err != nil {
					b.Fatal(err)
				}
				dst := make([]byte, len(src))
				name := fmt.Sprintf("%s/%s/%s", set, strings.ReplaceAll(spec, ":", "_"), d)
				for _, dir := range []string{"encode", "decode"} {
					run := func() {
						if dir == "encode" {
							if _, err := frame.Encode(meta, src, spec, frame.Options{}); err != nil {
								b.Fatal(err)
							}
						} else if _, err := frame.Decode(context.Background(), enc, dst, frame.DefaultLimits); err != nil {
							b.Fatal(err)
						}
					}
					for _, v := range variants {
						b.Run(name+"/"+dir+"/kernels="+v, func(b *testing.B) {
							runtime.LockOSThread()
							defer runtime.UnlockOSThread()
							b.SetBytes(int64(len(src)))
							restore := func() {}
							if v != "all" {
								restore = kernels.Set(v[1:], false)
							}
							defer restore()
							run() // warm
							cpu := testweights.ThreadCPU()
							for b.Loop() {
								run()
							}
							testweights.ReportCPU(b, cpu, len(src))
						})
					}
				}
			}
		}
	}
}
