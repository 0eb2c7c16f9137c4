package deflate

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/libdeflate"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// benchChunks are 1 MiB chunks (the default chunk size) of real weights
// in each dtype: stories260K, and the raw little-endian tensors named
// NAME-DTYPE.bin in $GOTENSOR_BENCH_WEIGHTS (bench/bench_codecs.py's
// datasets, e.g. minilm-bfloat16.bin), up to 8 chunks spread over each.
func benchChunks(b *testing.B) map[string][][]byte {
	out := map[string][][]byte{}
	w := testweights.Real(b)
	dtypes := []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32}
	for _, d := range dtypes {
		src := testweights.As(w, d)
		out["stories/"+d.String()] = spreadChunks(src, 1)
	}
	if dir := os.Getenv("GOTENSOR_BENCH_WEIGHTS"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			name := filepath.Base(f)
			out[name[:len(name)-4]] = spreadChunks(raw, 8)
		}
	}
	return out
}

func spreadChunks(src []byte, max int) [][]byte {
	const chunk = 1 << 20
	n := len(src) / chunk
	if n == 0 {
		return [][]byte{src[:len(src)&^7]}
	}
	var out [][]byte
	step := max1(n / max)
	for i := 0; i < n && len(out) < max; i += step {
		out = append(out, src[i*chunk:(i+1)*chunk])
	}
	return out
}

func max1(n int) int { return max(1, n) }

func dtypeOf(name string) tensor.DType {
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		if len(name) > len(d.String()) && name[len(name)-len(d.String()):] == d.String() {
			return d
		}
	}
	panic("no dtype in " + name)
}

// BenchmarkShuffleDeflate times shuffle-deflate and planes on the same
// chunks of real weights, and the stages of a shuffle-deflate decode.
func BenchmarkShuffleDeflate(b *testing.B) {
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	softwareEngine(b)
	sets := benchChunks(b)
	for name, chunks := range sets {
		d := dtypeOf(name)
		var total int
		for _, c := range chunks {
			total += len(c)
		}
		for _, spec := range []string{"shuffle-deflate", "shuffle-deflate:streams=1", "planes"} {
			c, param, err := codec.Parse(spec)
			if err != nil {
				b.Fatal(err)
			}
			encs := make([][]byte, len(chunks))
			auxs := make([]uint32, len(chunks))
			var enc int
			for i, src := range chunks {
				in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(src) / d.Size())}}, Param: param}
				e, aux, err := c.Encode(nil, src, in)
				if err != nil {
					b.Fatal(err)
				}
				encs[i], auxs[i] = e, aux
				enc += len(e)
			}
			b.Run(fmt.Sprintf("%s/%s/encode", name, spec), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(total))
				var buf []byte
				cpu := testweights.ThreadCPU()
				for b.Loop() {
					for _, src := range chunks {
						in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(src) / d.Size())}}, Param: param}
						buf, _, _ = c.Encode(buf, src, in)
					}
				}
				testweights.ReportCPU(b, cpu, total)
				b.ReportMetric(float64(total)/float64(enc), "ratio")
			})
			b.Run(fmt.Sprintf("%s/%s/decode", name, spec), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(total))
				dst := make([]byte, len(chunks[0]))
				cpu := testweights.ThreadCPU()
				for b.Loop() {
					for i, src := range chunks {
						in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(src) / d.Size())}}, Param: param}
						if err := c.Decode(dst[:len(src)], encs[i], in, auxs[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				testweights.ReportCPU(b, cpu, total)
			})
			if spec == "shuffle-deflate" {
				benchTwoStreams(b, name, chunks, encs, total)
			}
			if spec != "shuffle-deflate:streams=1" { // the stages of a one-stream chunk
				continue
			}
			dst := make([]byte, len(chunks[0]))
			for _, asm := range []bool{true, false} {
				if asm && !haveBMI2 {
					continue
				}
				stage := map[bool]string{true: "/stage/inflate-literals-asm", false: "/stage/inflate-literals-go"}[asm]
				b.Run(name+stage, func(b *testing.B) {
					defer func(v bool) { haveBMI2 = v }(haveBMI2)
					haveBMI2 = asm
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(total))
					var lt literalTables
					cpu := testweights.ThreadCPU()
					defer func() { testweights.ReportCPU(b, cpu, total) }()
					for b.Loop() {
						for i, src := range chunks {
							if !inflateLiterals(dst[:len(src)], encs[i], &lt) {
								b.Fatal("refused")
							}
						}
					}
				})
			}
			if libdeflate.Built {
				b.Run(name+"/stage/inflate-libdeflate", func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(total))
					cpu := testweights.ThreadCPU()
					defer func() { testweights.ReportCPU(b, cpu, total) }()
					for b.Loop() {
						for i, src := range chunks {
							if err := libdeflate.Inflate(dst[:len(src)], encs[i]); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
		}
	}
}

// benchTwoStreams times the literal decoder on two-stream chunks, the
// assembly and the Go twin.
func benchTwoStreams(b *testing.B, name string, chunks, encs [][]byte, total int) {
	d := dtypeOf(name)
	dst := make([]byte, len(chunks[0]))
	for _, asm := range []bool{true, false} {
		if asm && !haveBMI2 {
			continue
		}
		stage := map[bool]string{true: "/stage/inflate-literals2-asm", false: "/stage/inflate-literals2-go"}[asm]
		b.Run(name+stage, func(b *testing.B) {
			defer func(v bool) { haveBMI2 = v }(haveBMI2)
			haveBMI2 = asm
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(total))
			var lt literalSlots
			cpu := testweights.ThreadCPU()
			defer func() { testweights.ReportCPU(b, cpu, total) }()
			for b.Loop() {
				for i, src := range chunks {
					enc, h := encs[i], halfChunk(len(src), d.Size())
					endA := 4 + int(binary.LittleEndian.Uint32(enc))
					x := literalStream{r: bitio.Reader{Src: enc[:endA], Pos: 4}, lt: &lt.t[0], slots: &lt, dst: dst[:h]}
					y := literalStream{r: bitio.Reader{Src: enc, Pos: endA}, lt: &lt.t[1], slots: &lt, dst: dst[:len(src)], o: h}
					if !inflateLiterals2(&x, &y) {
						b.Fatal("refused")
					}
				}
			}
		})
	}
}
