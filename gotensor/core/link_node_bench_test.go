package core_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// BenchmarkStreamedToNode writes and reads MiniLM's size as one bf16
// tensor (45 MB, streamed) to a node in this process with none and with
// auto, alternating, and reports each one's median.
//
//	go test -run - -bench StreamedToNode -benchtime 30x ./gotensor/core
func BenchmarkStreamedToNode(b *testing.B) {
	ctx := context.Background()
	s := nodeStore(b)
	const n = 22_700_000 // bf16 elements
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{n}}
	raw := make([]byte, 2*n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(raw); i += 2 { // bfloat16 of small normal values
		binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
	}
	dst := make([]byte, len(raw))
	took := map[string][]time.Duration{}
	for i := 0; b.Loop(); i++ {
		specs := []string{"none", "auto"}
		if i%2 == 1 {
			specs = []string{"auto", "none"}
		}
		for _, spec := range specs {
			t0 := time.Now()
			if err := s.WriteTensor(ctx, "w", meta, raw, spec); err != nil {
				b.Fatal(err)
			}
			if err := s.ReadTensor(ctx, "w", meta, dst); err != nil {
				b.Fatal(err)
			}
			took[spec] = append(took[spec], time.Since(t0))
			s.Delete(ctx, "w")
		}
	}
	for _, spec := range []string{"none", "auto"} {
		d := took[spec]
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), spec+"-us")
	}
}
