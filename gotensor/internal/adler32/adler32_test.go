package adler32

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// words matches hash/adler32 at every length around its steps and
// reductions, on random bytes and on all-0xFF bytes (the largest sums).
func TestWordsMatchStd(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 5551, 5552, 5553, 5544, 5545, 11104, 11105, 1 << 20, 1<<20 + 3} {
		rnd, ff := make([]byte, n), make([]byte, n)
		for i := range rnd {
			rnd[i], ff[i] = byte(r.Uint32()), 0xFF
		}
		for _, b := range [][]byte{rnd, ff} {
			if got, want := words(1, b), adler32.Checksum(b); got != want {
				t.Fatalf("%d bytes: %08x, want %08x", n, got, want)
			}
		}
	}
}

func FuzzAdler32(f *testing.F) {
	f.Add([]byte("gotensor"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := adler32.Checksum(b)
		if got := words(1, b); got != want {
			t.Fatalf("%08x, want %08x", got, want)
		}
		if got := Checksum(b); got != want {
			t.Fatalf("blocks: %08x, want %08x", got, want)
		}
		if a, rest := blocks(1, b, false); words(a, rest) != want {
			t.Fatalf("Go twin: %08x, want %08x", words(a, rest), want)
		}
		if len(b) > 3 {
			if got := Combine(Checksum(b[:3]), Checksum(b[3:]), len(b)-3); got != want {
				t.Fatalf("Combine: %08x, want %08x", got, want)
			}
		}
	})
}

// The kernel (and its Go twin, lane for lane) matches hash/adler32 around
// its 1024-block runs, at every offset of a 32-byte block, on random and
// all-0xFF bytes.
func TestBlocksMatchStd(t *testing.T) {
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
			for _, useAsm := range []bool{false, asm} {
				if a, rest := blocks(1, b, useAsm); words(a, rest) != want {
					t.Fatalf("%d bytes at offset %d (asm %v): %08x, want %08x", n, off, useAsm, words(a, rest), want)
				}
			}
			if got := Checksum(b); got != want {
				t.Fatalf("%d bytes at offset %d: %08x, want %08x", n, off, got, want)
			}
		}
	}
}

// Combine joins two sums as one sum over both.
func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	for _, n := range []int{0, 1, 100, 65521, 65522, 1 << 20} {
		b := make([]byte, 2*n+5)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		for _, cut := range []int{0, 1, n, 2 * n} {
			if got, want := Combine(Checksum(b[:cut]), Checksum(b[cut:]), len(b)-cut), adler32.Checksum(b); got != want {
				t.Fatalf("%d bytes cut at %d: %08x, want %08x", len(b), cut, got, want)
			}
		}
	}
}

func BenchmarkChecksum(b *testing.B) {
	p := make([]byte, 1<<20)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.Run("gotensor", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			Checksum(p)
		}
	})
	b.Run("hash-adler32", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}

// The AVX2 Adler-32 kernel and its Go twin fill the same lanes.
func TestBlocksTwins(t *testing.T) {
	if !asm {
		t.Skip("no AVX2: the Go twin is the only path")
	}
	r := rand.New(rand.NewPCG(55, 56))
	for it := 0; it < 100; it++ {
		p := make([]byte, 32*(1+r.IntN(1024)))
		for i := range p {
			p[i] = byte(r.Uint32())
			if it%3 == 0 {
				p[i] = 0xFF
			}
		}
		var va, vg Lanes
		for i := range va {
			va[i] = uint32(r.IntN(1000))
		}
		vg = va
		blocksAVX2(p, &va)
		blocksGo(p, &vg)
		if va != vg {
			t.Fatalf("it %d: AVX2 %v, Go %v", it, va, vg)
		}
	}
}
