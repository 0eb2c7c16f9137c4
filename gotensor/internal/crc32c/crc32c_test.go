package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Every length and alignment, and an initial CRC, give hash/crc32's result.
func TestMatchesHashCRC32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	lens := []int{0, 1, 15, 16, 255, 256, 1023, 1024, 1025, 1040, 1279, 1280, 1536, 4096, 4099, 65536, 69999}
	for n := 1024; n < 1600; n += 7 {
		lens = append(lens, n)
	}
	for _, n := range lens {
		for _, a := range []int{0, 1, 5, 8} {
			if a+n > len(buf) {
				continue
			}
			b := buf[a : a+n]
			if got, want := Checksum(b), crc32.Checksum(b, table); got != want {
				t.Fatalf("len %d at %d: %#x, want %#x", n, a, got, want)
			}
			if got, want := Update(0xdeadbeef, b), crc32.Update(0xdeadbeef, table, b); got != want {
				t.Fatalf("update len %d at %d: %#x, want %#x", n, a, got, want)
			}
		}
	}
}

func BenchmarkChecksum(b *testing.B) {
	buf := make([]byte, 256<<10)
	b.Run("crc32c", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			Checksum(buf)
		}
	})
	b.Run("hash-crc32", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			crc32.Checksum(buf, table)
		}
	})
}
