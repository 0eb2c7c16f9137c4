//go:build cgo && libzstd

package libzstd_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/codec/internal/libzstd"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// storiesBF16 is bench-codecs' stories260K bfloat16 tensor: the
// checkpoint's weights (after its 28-byte header) rounded to nearest even.
func storiesBF16(tb testing.TB) []byte {
	w, err := testweights.Stories()
	if err != nil {
		tb.Skipf("stories260K.bin: %v", err)
	}
	out := make([]byte, 2*len(w))
	for i, x := range w {
		u := math.Float32bits(x)
		u += 0x7fff + (u>>16)&1
		binary.LittleEndian.PutUint16(out[2*i:], uint16(u>>16))
	}
	return out
}

// storiesCase is one way of coding stories260K bfloat16: gotensor's zstd
// through mem:// on one worker, or libzstd's level 3 called directly (what
// zstandard.ZstdCompressor(level=3) does, on this libzstd).
type storiesCase struct {
	name string
	fn   func(tb testing.TB)
}

func storiesCases(tb testing.TB) (cases []storiesCase, raw []byte, done func()) {
	raw = storiesBF16(tb)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(len(raw) / 2)}}
	parallel.SetWorkers(1)
	ctx := context.Background()
	s, err := core.Open("mem://")
	if err != nil {
		tb.Fatal(err)
	}
	l3, err := libzstd.NewEncoder(libzstd.Params{Level: 3, ContentSize: true})
	if err != nil {
		tb.Fatal(err)
	}
	dst := make([]byte, len(raw))
	buf := make([]byte, len(raw)+1024)
	comp, err := l3.Compress(buf, raw)
	if err != nil {
		tb.Fatal(err)
	}
	comp = slices.Clone(comp)
	if err := s.WriteTensor(ctx, "k", meta, raw, "zstd"); err != nil {
		tb.Fatal(err)
	}
	check := func(tb testing.TB, err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	cases = []storiesCase{
		{"gotensor/write", func(tb testing.TB) { check(tb, s.WriteTensor(ctx, "k", meta, raw, "zstd")) }},
		{"level3/compress", func(tb testing.TB) { _, err := l3.Compress(buf, raw); check(tb, err) }},
		{"gotensor/read", func(tb testing.TB) { check(tb, s.ReadTensor(ctx, "k", meta, dst)) }},
		{"level3/decompress", func(tb testing.TB) { check(tb, libzstd.Decompress(dst, comp)) }},
	}
	return cases, raw, func() { s.Close(); parallel.SetWorkers(0) }
}

// BenchmarkStoriesMem: bench-codecs' stories260K bfloat16 cell in Go, one
// 528 KB tensor written and read through mem:// with codec zstd on one
// worker, beside libzstd's level 3 on the same bytes. cpuMB/s is raw
// bytes per second of the process's CPU time (all its threads: the Go
// runtime's own included, as bench-codecs --clock cpu counts them).
//
//	go test -tags libzstd -run '^$' -bench StoriesMem ./gotensor/codec/internal/libzstd
func BenchmarkStoriesMem(b *testing.B) {
	cases, raw, done := storiesCases(b)
	defer done()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			cpu := clock(unix.CLOCK_PROCESS_CPUTIME_ID)
			for b.Loop() {
				c.fn(b)
			}
			if d := clock(unix.CLOCK_PROCESS_CPUTIME_ID) - cpu; d > 0 {
				b.ReportMetric(float64(len(raw))*float64(b.N)/d/1e6, "cpuMB/s")
			}
		})
	}
}

// TestStoriesPaired (GOTENSOR_STORIES_PAIRED=1) times the cases of
// BenchmarkStoriesMem one call each in turn, many rounds, so that a shared
// machine's changing load falls on all alike, and logs the medians of the
// thread's CPU time per call beside level 3's.
func TestStoriesPaired(t *testing.T) {
	if os.Getenv("GOTENSOR_STORIES_PAIRED") == "" {
		t.Skip("GOTENSOR_STORIES_PAIRED unset")
	}
	cases, raw, done := storiesCases(t)
	defer done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	times := make([][]float64, len(cases))
	for r := range 500 {
		for i, c := range cases {
			t0 := clock(unix.CLOCK_THREAD_CPUTIME_ID)
			c.fn(t)
			if r >= 20 { // warm
				times[i] = append(times[i], clock(unix.CLOCK_THREAD_CPUTIME_ID)-t0)
			}
		}
	}
	med := make([]float64, len(cases))
	for i := range cases {
		slices.Sort(times[i])
		med[i] = times[i][len(times[i])/2]
	}
	for i, c := range cases {
		ref := med[i|1] // each gotensor case is followed by its level-3 twin
		t.Logf("%-18s %5.0f MB/s  %.3fx level 3", c.name, float64(len(raw))/med[i]/1e6, ref/med[i])
	}
}

func clock(id int32) float64 {
	var ts unix.Timespec
	unix.ClockGettime(id, &ts)
	return float64(ts.Nano()) / 1e9
}
