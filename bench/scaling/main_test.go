package main

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

func TestWorkerCounts(t *testing.T) {
	for _, c := range []struct {
		list string
		cpus int
		want []int
	}{
		{"", 1, []int{1}},
		{"", 2, []int{1, 2}},
		{"", 16, []int{1, 2, 4, 8, 16}},
		{"", 12, []int{1, 2, 4, 8, 12}},
		{"1, 3", 16, []int{1, 3}},
	} {
		got, err := workerCounts(c.list, c.cpus)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("workerCounts(%q, %d) = %v, %v; want %v", c.list, c.cpus, got, err, c.want)
		}
	}
	for _, bad := range []string{"0", "x", "2,-1"} {
		if _, err := workerCounts(bad, 4); err == nil {
			t.Errorf("workerCounts(%q) took a bad count", bad)
		}
	}
}

// bf16 weights drawn from a normal distribution: planes codes them below
// their raw size.
func weights(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
	}
	return b
}

func TestMeasureRoundTripsAndRestores(t *testing.T) {
	raw := weights(1 << 20)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	procs := runtime.GOMAXPROCS(0)
	r, err := measure(meta, raw, "planes", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers != 1 || r.RawBytes != int64(len(raw)) || r.StoredBytes <= 0 || r.StoredBytes >= r.RawBytes {
		t.Errorf("planes on bf16 weights: %+v", r)
	}
	if r.WriteGBps <= 0 || r.ReadGBps <= 0 || math.IsInf(r.WriteGBps, 0) {
		t.Errorf("speeds %v, %v", r.WriteGBps, r.ReadGBps)
	}
	if runtime.GOMAXPROCS(0) != procs || parallel.Workers() != procs {
		t.Errorf("GOMAXPROCS %d, workers %d after measure; want %d", runtime.GOMAXPROCS(0), parallel.Workers(), procs)
	}
	if _, err := measure(meta, raw, "nosuchcodec", 1, 1); err == nil {
		t.Error("an unknown codec was measured")
	}
}
