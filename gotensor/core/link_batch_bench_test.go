package core_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// miniLMShapes are all-MiniLM-L6-v2's 103 tensors' shapes (bf16).
func miniLMShapes() [][]int64 {
	out := [][]int64{{30522, 384}, {512, 384}, {2, 384}, {384}, {384}}
	for range 6 {
		for range 4 { // query, key, value, attention output
			out = append(out, []int64{384, 384}, []int64{384})
		}
		out = append(out, []int64{384}, []int64{384}, // attention LayerNorm
			[]int64{1536, 384}, []int64{1536}, []int64{384, 1536}, []int64{384},
			[]int64{384}, []int64{384}) // output LayerNorm
	}
	return append(out, []int64{384, 384}, []int64{384}) // pooler
}

// BenchmarkBatchToNode writes MiniLM's 103 tensors as a batch (all in
// flight together, as write_tensors does) to a node in this process and
// reads them back, with none and with auto, alternating, and reports
// each one's median and which codecs auto chose.
//
//	go test -run - -bench BatchToNode -benchtime 20x ./gotensor/core
func BenchmarkBatchToNode(b *testing.B) {
	ctx := context.Background()
	s := nodeStore(b)
	r := rand.New(rand.NewPCG(1, 2))
	var metas []tensor.Meta
	var raws [][]byte
	for _, sh := range miniLMShapes() {
		m := tensor.Meta{DType: tensor.BFloat16, Shape: sh}
		n, _ := m.NumBytes()
		raw := make([]byte, n)
		for i := 0; i < len(raw); i += 2 {
			binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
		}
		metas, raws = append(metas, m), append(raws, raw)
	}
	all := func(f func(i int) error) {
		var wg sync.WaitGroup
		errs := make([]error, len(raws))
		for i := range raws {
			wg.Go(func() { errs[i] = f(i) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	dsts := make([][]byte, len(raws))
	for i, raw := range raws {
		dsts[i] = make([]byte, len(raw))
	}
	took := map[string][]time.Duration{}
	for i := 0; b.Loop(); i++ {
		specs := []string{"none", "auto"}
		if i%2 == 1 {
			specs = []string{"auto", "none"}
		}
		for _, spec := range specs {
			t0 := time.Now()
			all(func(i int) error { return s.WriteTensor(ctx, fmt.Sprint("t", i), metas[i], raws[i], spec) })
			all(func(i int) error { return s.ReadTensor(ctx, fmt.Sprint("t", i), metas[i], dsts[i]) })
			took[spec] = append(took[spec], time.Since(t0))
			all(func(i int) error { return s.Delete(ctx, fmt.Sprint("t", i)) })
		}
	}
	for _, spec := range []string{"none", "auto"} {
		d := took[spec]
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), spec+"-us")
	}
	b.Logf("auto chose %v", s.Stats().Codecs)
}
