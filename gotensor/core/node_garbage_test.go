package core_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A large tensor streamed to a memory node and read back, over and over,
// makes no garbage of its size on either side: the client sends its raw
// chunks from the tensor itself and receives ranges into recycled memory;
// the node receives parts into recycled memory, assembles the frame in
// memory its store lends, and serves ranges from a lease, so a deleted
// frame's memory goes to the next write. Each of these, undone, makes a
// frame's worth of garbage per round trip (measured: 4 frames' worth
// before, with page faults and collections that slowed every pass).
func TestStreamedRoundTripMakesNoFrameGarbage(t *testing.T) {
	const size = 24 << 20 // streamed: at least StreamMin
	if per := roundTripGarbage(t, size); per > size/4 {
		t.Fatalf("a round trip of a %d MiB tensor allocated %.1f MiB", size>>20, float64(per)/(1<<20))
	}
}

// So does a tensor small enough to go whole (less than StreamMin): the
// client builds its frame in memory it lends and takes back once sent,
// and receives the frame it reads into memory given back at Release.
func TestWholeRoundTripMakesNoFrameGarbage(t *testing.T) {
	const size = 4 << 20
	if per := roundTripGarbage(t, size); per > size/4 {
		t.Fatalf("a round trip of a %d MiB tensor allocated %.1f MiB", size>>20, float64(per)/(1<<20))
	}
}

// roundTripGarbage is the bytes a none write, read and delete of a tensor
// of size bytes through a node in this process allocates, per round trip.
func roundTripGarbage(t *testing.T, size int) uint64 {
	ctx := context.Background()
	s := nodeStore(t)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(size / 2)}}
	raw := make([]byte, size)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	dst := make([]byte, size)
	roundTrip := func() {
		if err := s.WriteTensor(ctx, "w", meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
		if err := s.ReadTensor(ctx, "w", meta, dst); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "w"); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // fills the pools
		roundTrip()
	}
	const rounds = 8
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for range rounds {
		roundTrip()
	}
	runtime.ReadMemStats(&b)
	if dst[12345] != raw[12345] || dst[size-1] != raw[size-1] {
		t.Fatal("read back wrong bytes")
	}
	return (b.TotalAlloc - a.TotalAlloc) / rounds
}
