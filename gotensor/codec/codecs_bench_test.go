package codec

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// realWeights is the fp32 payload of the stories260K checkpoint (llama2.c:
// a 28-byte header, then the weights), or synthetic weights without it.
func realWeights(b testing.TB) []float32 {
	w, err := testweights.Stories()
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
	return w
}

// One chunk of real weights per codec and dtype on one core, in MB per
// second of the benchmark thread's CPU time (steadier than wall time on a
// shared machine): each sub-benchmark locks its goroutine to its thread.
func BenchmarkCodecReal(b *testing.B) {
	w := realWeights(b)
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := storedAs(w, d)
		for _, name := range []string{"planes", "shuffle-deflate", "deflate", "zstd", "shuffle-zstd", "q4", "q8"} {
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
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(src)))
				var buf []byte
				cpu := threadCPU()
				for b.Loop() {
					buf, _, _ = c.Encode(buf, src, in)
				}
				reportCPU(b, cpu, len(src))
				b.ReportMetric(float64(len(src))/float64(len(enc)), "ratio")
			})
			dst := make([]byte, len(src))
			b.Run(name+"/"+d.String()+"/decode", func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(src)))
				cpu := threadCPU()
				for b.Loop() {
					if err := c.Decode(dst, enc, in, aux); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu, len(src))
			})
		}
	}
}

func threadCPU() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return float64(ts.Nano()) / 1e9
}

// reportCPU adds the speed in MB of input per second of this thread's CPU time.
func reportCPU(b *testing.B, since float64, n int) {
	if cpu := threadCPU() - since; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu/1e6, "cpuMB/s")
	}
}
