package codec

import (
	"bytes"
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

// mergeAdler2 merges as mergePlanes does and sums each plane as Adler-32
// does, from any running sums, at every length around the kernel's blocks
// and its 1024-block runs.
func TestMergeAdler2(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 1000, 32*1024 - 1, 32 * 1024, 32*1024 + 33, 100000} {
		hi, lo := make([]byte, n), make([]byte, n)
		for i := range hi {
			hi[i], lo[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		if n > 40000 { // a run of 0xFF over a whole kernel call: the lanes' largest sums
			for i := 0; i < 40000; i++ {
				hi[i], lo[i] = 0xFF, 0xFF
			}
		}
		want := make([]byte, 2*n)
		mergeGeneric(want, [][]byte{hi, lo}, 2, true)
		pre := []byte("some bytes before")
		ah, al := adler32.Checksum(pre), adler32.Checksum(pre[3:])
		got := make([]byte, 2*n)
		sh, sl := mergeAdler2(got, hi, lo, ah, al)
		if !bytes.Equal(got, want) {
			t.Fatalf("n %d: merged bytes differ", n)
		}
		if wh, wl := adler32.Checksum(append(bytes.Clone(pre), hi...)), adler32.Checksum(append(bytes.Clone(pre[3:]), lo...)); sh != wh || sl != wl {
			t.Fatalf("n %d: sums %08x %08x, want %08x %08x", n, sh, sl, wh, wl)
		}
	}
}
