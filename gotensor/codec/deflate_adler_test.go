package codec

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// adler32Words matches hash/adler32 at every length around its steps and
// reductions, on random bytes and on all-0xFF bytes (the largest sums).
func TestAdler32MatchesStd(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 5551, 5552, 5553, 5544, 5545, 11104, 11105, 1 << 20, 1<<20 + 3} {
		rnd, ff := make([]byte, n), make([]byte, n)
		for i := range rnd {
			rnd[i], ff[i] = byte(r.Uint32()), 0xFF
		}
		for _, b := range [][]byte{rnd, ff} {
			if got, want := adler32Words(b), adler32.Checksum(b); got != want {
				t.Fatalf("%d bytes: %08x, want %08x", n, got, want)
			}
		}
	}
}

func FuzzAdler32(f *testing.F) {
	f.Add([]byte("gotensor"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := adler32.Checksum(b)
		if got := adler32Words(b); got != want {
			t.Fatalf("%08x, want %08x", got, want)
		}
		if got := adler32Go(b); got != want {
			t.Fatalf("AVX2: %08x, want %08x", got, want)
		}
	})
}

// The AVX2 path (and its Go twin, lane for lane) matches hash/adler32
// around its 1024-block runs, at every offset of a 32-byte block, on
// random and all-0xFF bytes.
func TestAdler32BlocksMatchStd(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for _, n := range []int{32, 33, 63, 64, 65, 1000, 32767, 32768, 32769, 65536 + 31, 1 << 20, 3<<20 + 5} {
		rnd, ff := make([]byte, n+31), make([]byte, n+31)
		for i := range rnd {
			rnd[i], ff[i] = byte(r.Uint32()), 0xFF
		}
		for _, src := range [][]byte{rnd, ff} {
			off := r.IntN(32)
			b := src[off : off+n]
			want := adler32.Checksum(b)
			a, rest := adler32Blocks(1, b, false)
			if got := adler32Update(a, rest); got != want {
				t.Fatalf("%d bytes: Go twin %08x, want %08x", n, got, want)
			}
			if got := adler32Go(b); got != want {
				t.Fatalf("%d bytes at offset %d: %08x, want %08x", n, off, got, want)
			}
		}
	}
}
