package frame

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A whole-frame write of more chunks than the scratch pool keeps buffers
// of one size (24 on two cores) allocates no scratch anew once warm: its
// coded chunks share a few slabs the pool keeps. It allocated a buffer for
// every chunk past the pool's bound on every write.
func TestWriterReusesScratchAcrossWrites(t *testing.T) {
	const chunk = 64 << 10
	chunks := 8*runtime.NumCPU() + 8 + 16 // the pool's bound per size class, and more
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(chunks * chunk / 2)}}
	raw := weights(meta.DType, chunks*chunk/2, 3)
	for _, workers := range []int{1, 0} {
		parallel.SetWorkers(workers)
		lend := &recycler{}
		write := func() {
			w := newWriter(t, meta, "zstd", Options{ChunkSize: chunk}, lend)
			out, err := w.Encode(raw)
			if err != nil {
				t.Fatal(err)
			}
			lend.Put(out)
		}
		write()
		write()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const writes = 4
		for range writes {
			write()
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / writes; per > uint64(len(raw))/16 {
			t.Errorf("workers=%d: a warm write of %d bytes allocates %d bytes", parallel.Workers(), len(raw), per)
		}
	}
	parallel.SetWorkers(0)
}

// Coded and stored-raw chunks carved from the same slabs, written part by
// part in any order (stored chunks copied into scratch) and whole (stored
// chunks referring to the caller's bytes), decode to the tensor; an
// aborted write returns its slabs.
func TestWriterSlabsHoldCodedAndRawChunks(t *testing.T) {
	const chunk, chunks = 64 << 10, 40
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{chunks * chunk / 2}}
	raw := weights(meta.DType, chunks*chunk/2, 5)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < chunks; i += 3 { // every third chunk incompressible
		for j := i * chunk; j < (i+1)*chunk; j++ {
			raw[j] = byte(r.Uint32())
		}
	}
	for _, spec := range []string{"zstd", "lz4", "planes"} {
		want, err := Encode(meta, raw, spec, Options{ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		w := newWriter(t, meta, spec, Options{ChunkSize: chunk}, Heap)
		writeShuffled(t, w, raw, nil)
		got, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: a frame written in parts differs from Encode's", spec)
		}
		dst := make([]byte, len(raw))
		if _, err := Decode(ctx, got, dst, DefaultLimits); err != nil || !bytes.Equal(dst, raw) {
			t.Fatalf("%s: decode: %v", spec, err)
		}
		held := scratch.Held()
		w = newWriter(t, meta, spec, Options{ChunkSize: chunk}, Heap)
		if err := w.WriteAt(raw[:chunk*8], 0); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		if len(w.slabs) != 0 || scratch.Held() < held {
			t.Fatalf("%s: an aborted write kept its slabs", spec)
		}
	}
}
