package testweights

import (
	"encoding/binary"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/internal/half"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Real is stories260K's float32 weights, or 256K synthetic normal ones
// (logged) where the checkpoint is missing.
func Real(tb testing.TB) []float32 {
	w, err := Stories()
	if err != nil {
		tb.Logf("stories260K.bin not found (%v): synthetic weights", err)
		src := NormalBF16(256<<10, 1, 2)
		w = make([]float32, len(src)/2)
		for i := range w {
			w[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
	}
	return w
}

// Sets are the real weight sets the codec benchmarks run on:
// stories260K, and each NAME=PATH of GOTENSOR_WEIGHTS (comma separated;
// PATH a file of little-endian float32, as bench/bench_codecs.py
// --dump-weights writes the bench's weight sets), in name order.
func Sets(tb testing.TB) (names []string, sets map[string][]float32) {
	sets = map[string][]float32{"stories260K": Real(tb)}
	for _, kv := range strings.Split(os.Getenv("GOTENSOR_WEIGHTS"), ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			tb.Fatalf("GOTENSOR_WEIGHTS %s: %v", name, err)
		}
		w := make([]float32, len(raw)/4)
		for i := range w {
			w[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		sets[name] = w
	}
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, sets
}

// As is w as a tensor of dtype d (float16, bfloat16 or float32), rounded
// to nearest even as torch's .to() does.
func As(w []float32, d tensor.DType) []byte {
	out := make([]byte, len(w)*d.Size())
	for i, x := range w {
		Put(out, i, x, d)
	}
	return out
}

// Put stores x as element i of the tensor b of dtype d.
func Put(b []byte, i int, x float32, d tensor.DType) {
	switch d {
	case tensor.Float16:
		binary.LittleEndian.PutUint16(b[2*i:], half.F32ToF16(x))
	case tensor.BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], half.F32ToBF16(x))
	default:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

// ThreadCPU is this thread's CPU time in seconds (steadier than wall time
// on a shared machine: lock the goroutine to its thread).
func ThreadCPU() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return float64(ts.Nano()) / 1e9
}

// ReportCPU adds the speed in MB of input per second of this thread's
// CPU time since since, for b.N runs over n bytes.
func ReportCPU(b *testing.B, since float64, n int) {
	if cpu := ThreadCPU() - since; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu/1e6, "cpuMB/s")
	}
}
