package crc32c

import (
	"math/rand/v2"
	"testing"
)

// A patched CRC equals the CRC computed again over the changed message,
// for changes at the start, the middle and the end of messages of many
// lengths.
func TestPatchMatchesRecompute(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, total := range []int{1, 2, 13, 64, 1023, 1500, 49572, 70001} {
		msg := make([]byte, total)
		for i := range msg {
			msg[i] = byte(r.Uint32())
		}
		for range 20 {
			n := 1 + r.IntN(min(total, 40))
			off := r.IntN(total - n + 1)
			checkPatch(t, msg, off, n, r)
		}
		checkPatch(t, msg, 0, min(total, 16), r)
		checkPatch(t, msg, total-min(total, 12), min(total, 12), r)
	}
}

func checkPatch(t *testing.T, msg []byte, off, n int, r *rand.Rand) {
	t.Helper()
	before := Checksum(msg)
	old := append([]byte(nil), msg[off:off+n]...)
	repl := make([]byte, n)
	for i := range repl {
		repl[i] = byte(r.Uint32())
	}
	copy(msg[off:], repl)
	if got, want := Patch(before, int64(len(msg)), int64(off), old, repl), Checksum(msg); got != want {
		t.Fatalf("len %d, %d bytes at %d: patched %#x, recomputed %#x", len(msg), n, off, got, want)
	}
}

func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 5000)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for _, cut := range []int{0, 1, 100, 2500, 4999, 5000} {
		if got, want := Combine(Checksum(b[:cut]), Checksum(b[cut:]), int64(len(b)-cut)), Checksum(b); got != want {
			t.Fatalf("cut %d: %#x, want %#x", cut, got, want)
		}
	}
}

// Differential: any message and any change of it.
func FuzzPatch(f *testing.F) {
	f.Add([]byte("the chunk table of a frame"), uint16(4), []byte("XYZ"))
	f.Fuzz(func(t *testing.T, msg []byte, at uint16, repl []byte) {
		if len(msg) == 0 {
			return
		}
		msg = append([]byte(nil), msg...) // the engine's inputs may share memory
		off := int(at) % len(msg)
		repl = append([]byte(nil), repl[:min(len(repl), len(msg)-off)]...)
		before := Checksum(msg)
		old := append([]byte(nil), msg[off:off+len(repl)]...)
		copy(msg[off:], repl)
		if got, want := Patch(before, int64(len(msg)), int64(off), old, repl), Checksum(msg); got != want {
			t.Fatalf("%#x, want %#x", got, want)
		}
	})
}
