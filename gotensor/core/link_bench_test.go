package core

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// miniLM is all-MiniLM-L6-v2's float tensors in bfloat16: how many of
// each size in bytes (biases and LayerNorms, weights, the embeddings).
var miniLM = []struct{ n, bytes int }{
	{57, 768}, {1, 1536}, {6, 3072}, {25, 294912}, {1, 393216}, {12, 1179648}, {1, 23440896},
}

type benchTensor struct {
	key  string
	meta tensor.Meta
	raw  []byte
	out  []byte
}

func miniLMTensors() []benchTensor {
	var ts []benchTensor
	for _, c := range miniLM {
		for i := range c.n {
			raw := bf16Weights(c.bytes / 2)
			ts = append(ts, benchTensor{
				key: fmt.Sprintf("t%d.%d", c.bytes, i), raw: raw, out: make([]byte, len(raw)),
				meta: tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(c.bytes / 2)}},
			})
		}
	}
	return ts
}

// writeReadAll writes every tensor concurrently with spec, then reads
// them all back concurrently, as Python's write_tensors/read_tensors do.
func writeReadAll(tb testing.TB, s *Store, ts []benchTensor, spec string) {
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(ts))
	for _, t := range ts {
		wg.Go(func() { errs <- s.WriteTensor(ctx, t.key, t.meta, t.raw, spec) })
	}
	wg.Wait()
	for _, t := range ts {
		wg.Go(func() { errs <- s.ReadTensor(ctx, t.key, t.meta, t.out) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkAutoVsNoneMiniLM times "auto" (which picks none into memory)
// against none on MiniLM's tensors in mem://, alternating the two in
// every iteration, and reports each one's median: whole batches (write
// then read of all 104 tensors), and one tensor of each size written and
// read alone.
//
//	go test -run - -bench AutoVsNone -benchtime 200x ./gotensor/core
func BenchmarkAutoVsNoneMiniLM(b *testing.B) {
	ts := miniLMTensors()
	s, _ := Open("mem://bench-auto")
	defer s.Close()
	writeReadAll(b, s, ts, "auto") // measures the codecs' speeds
	report := func(b *testing.B, took map[string][]time.Duration) {
		med := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2].Nanoseconds())
		}
		n, a := med(took["none"]), med(took["auto"])
		b.ReportMetric(n, "none-ns")
		b.ReportMetric(a, "auto-ns")
		b.ReportMetric(a/n, "auto/none")
	}
	b.Run("batch", func(b *testing.B) {
		took := map[string][]time.Duration{}
		i := 0
		for b.Loop() {
			for _, spec := range specOrder(i) {
				t0 := time.Now()
				writeReadAll(b, s, ts, spec)
				took[spec] = append(took[spec], time.Since(t0))
			}
			i++
		}
		report(b, took)
	})
	for _, c := range miniLM {
		i := slices.IndexFunc(ts, func(u benchTensor) bool { return len(u.raw) == c.bytes })
		t := ts[i]
		b.Run(fmt.Sprintf("one/%dB", c.bytes), func(b *testing.B) {
			took := map[string][]time.Duration{}
			i := 0
			for b.Loop() {
				for _, spec := range specOrder(i) {
					t0 := time.Now()
					if err := s.WriteTensor(ctx, t.key, t.meta, t.raw, spec); err != nil {
						b.Fatal(err)
					}
					if err := s.ReadTensor(ctx, t.key, t.meta, t.out); err != nil {
						b.Fatal(err)
					}
					took[spec] = append(took[spec], time.Since(t0))
				}
				i++
			}
			report(b, took)
		})
	}
}

// specOrder is none then auto, or the other way round in odd rounds.
func specOrder(i int) []string {
	if i%2 == 1 {
		return []string{"auto", "none"}
	}
	return []string{"none", "auto"}
}
