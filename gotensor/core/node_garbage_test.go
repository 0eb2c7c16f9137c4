package core_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
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
	if per := roundTripGarbage(t, nodeStore(t), size, "none"); per > size/4 {
		t.Fatalf("a round trip of a %d MiB tensor allocated %.1f MiB", size>>20, float64(per)/(1<<20))
	}
}

// Coded chunks, streamed or built whole, are coded into the writer's
// scratch, room for the codec's worst case (codec.Bounded), not into
// memory the codec allocates when the room is too small for its bound.
func TestCodedWritesMakeNoFrameGarbage(t *testing.T) {
	const size = 24 << 20
	mem, err := core.Open("mem://garbage")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, st := range []struct {
		name string
		s    *core.Store
	}{{"node", nodeStore(t)}, {"mem", mem}} {
		for _, spec := range []string{"planes", "lz4"} {
			if per := roundTripGarbage(t, st.s, size, spec); per > size/4 {
				t.Errorf("%s %s: a round trip of a %d MiB tensor allocated %.1f MiB", st.name, spec, size>>20, float64(per)/(1<<20))
			}
		}
	}
}

// So does a tensor small enough to go whole (less than StreamMin): the
// client builds its frame in memory it lends and takes back once sent,
// and receives the frame it reads into memory given back at Release.
func TestWholeRoundTripMakesNoFrameGarbage(t *testing.T) {
	const size = 4 << 20
	if per := roundTripGarbage(t, nodeStore(t), size, "none"); per > size/4 {
		t.Fatalf("a round trip of a %d MiB tensor allocated %.1f MiB", size>>20, float64(per)/(1<<20))
	}
}

// roundTripGarbage is the bytes a write with spec, read and delete of a
// bf16 tensor of size bytes (small normal weights) through s allocates
// in this process, per round trip.
func roundTripGarbage(t *testing.T, s *core.Store, size int, spec string) uint64 {
	ctx := context.Background()
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(size / 2)}}
	raw := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < size; i += 2 {
		binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
	}
	dst := make([]byte, size)
	roundTrip := func() {
		if err := s.WriteTensor(ctx, "w", meta, raw, spec); err != nil {
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
	if !bytes.Equal(dst, raw) {
		t.Fatal("read back wrong bytes")
	}
	return (b.TotalAlloc - a.TotalAlloc) / rounds
}
