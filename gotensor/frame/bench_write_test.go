package frame

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// go test -tags libzstd -bench WriteReal -run ^$ ./gotensor/frame with
// GOTENSOR_BENCH_WEIGHTS naming a folder of raw bfloat16 tensors
// (NAME-bfloat16.bin, bench/bench_codecs.py's datasets): a zstd write of
// each through the frame writer on one worker, into a lender that recycles
// the frame's memory as mem:// does, beside the bare codec on the same
// chunks. cpuMB/s is raw bytes per second of the process's CPU time (the
// garbage collector's included), steadier than wall time on a shared
// machine.
func BenchmarkWriteReal(b *testing.B) {
	dir := os.Getenv("GOTENSOR_BENCH_WEIGHTS")
	files, _ := filepath.Glob(filepath.Join(dir, "*-bfloat16.bin"))
	if len(files) == 0 {
		b.Skip("GOTENSOR_BENCH_WEIGHTS names no folder of NAME-bfloat16.bin tensors")
	}
	parallel.SetWorkers(1)
	defer parallel.SetWorkers(0)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".bin")
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(len(raw) / 2)}}
		c, param, err := codec.Parse("zstd")
		if err != nil {
			b.Fatal(err)
		}
		lend := &recycler{}
		b.Run(name+"/write", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			cpu := processCPU()
			var size int
			for b.Loop() {
				w, err := NewWriter(meta, c, param, Options{}, lend)
				if err != nil {
					b.Fatal(err)
				}
				out, err := w.Encode(raw)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
				lend.Put(out) // the key replaced: its frame's memory lent again
			}
			reportProcessCPU(b, cpu, len(raw))
			b.ReportMetric(float64(len(raw))/float64(size), "ratio")
		})
		b.Run(name+"/compress", func(b *testing.B) { // the chunks the writer codes, into one reused buffer
			h, in, err := newHeader(meta, c, param, Options{})
			if err != nil {
				b.Fatal(err)
			}
			cs := int64(h.ChunkSize)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			var buf []byte
			cpu := processCPU()
			for b.Loop() {
				for i := range h.Chunks {
					src := raw[int64(i)*cs:][:h.RawChunkLen(i)]
					if buf, _, err = c.Encode(buf[:0:cap(buf)], src, in); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportProcessCPU(b, cpu, len(raw))
		})
	}
}

// recycler lends the last frame handed back when it is large enough, as
// mem:// lends the memory of a replaced frame.
type recycler struct{ last []byte }

func (r *recycler) Get(n int) []byte {
	if cap(r.last) >= n {
		b := r.last[:n]
		r.last = nil
		return b
	}
	return make([]byte, n)
}

func (r *recycler) Put(b []byte) { r.last = b }

func processCPU() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return float64(ts.Nano()) / 1e9
}

func reportProcessCPU(b *testing.B, since float64, n int) {
	if cpu := processCPU() - since; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu/1e6, "cpuMB/s")
	}
}
