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
		if got, want := adler32Words(b), adler32.Checksum(b); got != want {
			t.Fatalf("%08x, want %08x", got, want)
		}
	})
}
