package all_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/internal/kernels"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// offOf are the ways each codec is measured with kernels off: each group
// alone, and where a group stands in for another when that one is off (the
// SSSE3 and SSE kernels for AVX2's), both off, so that each is held to
// what runs without it.
var offOf = map[string][]string{
	"planes":                    {"planes.bmi2", "shuffle.avx2", "shuffle.avx2,shuffle.ssse3"},
	"shuffle-deflate":           {"deflate.bmi2", "deflate.literals", "deflate.merge-adler-avx2", "adler32.avx2", "shuffle.avx2", "shuffle.avx2,shuffle.ssse3"},
	"shuffle-deflate:streams=1": {"deflate.bmi2", "deflate.literals", "adler32.avx2", "shuffle.avx2", "shuffle.avx2,shuffle.ssse3"},
	"deflate":                   {"adler32.avx2"},
	"shuffle-zstd":              {"shuffle.avx2", "shuffle.avx2,shuffle.ssse3"},
	"q4":                        {"quant.f16c", "quant.avx2,quant.f16c", "quant.avx2,quant.f16c,quant.ssse3"},
	"q8":                        {"quant.f16c", "quant.avx2,quant.f16c", "quant.avx2,quant.f16c,quant.ssse3"},
}

// BenchmarkKernels is BenchmarkCodecReal with every kernel on
// (kernels=all) and with kernel groups off (kernels=-NAME,-NAME: offOf),
// one after another: the end-to-end measurement each kernel is held to
// (the codec packages' READMEs). Run the binary several times with
// -count 1 (each pass a round of every way, so that a shared machine's
// drift falls on all alike; GOTENSOR_PASS=1, 2, ... starts each pass at
// another way, as the first runs slow) and compare with
// benchstat -col /kernels. GOTENSOR_CODECS narrows the codecs.
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
			ways:
				for _, off := range offOf[spec] {
					for _, k := range strings.Split(off, ",") {
						if !have[k] {
							continue ways
						}
					}
					variants = append(variants, "-"+strings.ReplaceAll(off, ",", ",-"))
				}
				// the first way of a sub-benchmark runs slow (encode's most):
				// GOTENSOR_PASS=n starts pass n at way n
				pass, _ := strconv.Atoi(os.Getenv("GOTENSOR_PASS"))
				variants = append(variants[pass%len(variants):], variants[:pass%len(variants)]...)
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
							if v != "all" {
								for _, k := range strings.Split(v, ",") {
									defer kernels.Set(k[1:], false)()
								}
							}
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
