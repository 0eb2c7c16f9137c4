package binding

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// The binding's share of a small call from Python or C (the cgo crossing
// and the Python side excluded): a 1 KiB float32 tensor written, read
// into a caller's buffer, and read into the thread's scratch as Python's
// read_tensor does for a new tensor.
//
//	go test -run - -bench SmallCalls -benchmem ./gotensor/binding
func BenchmarkSmallCalls(b *testing.B) {
	h, err := Open("mem://")
	if err != nil {
		b.Fatal(err)
	}
	defer Close(h)
	src := make([]byte, 1024)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, 1024)
	scratch := make([]byte, 64<<10)
	meta := make([]int64, MetaWords)
	shape := []int64{256}
	f32 := int64(tensor.Float32)
	if err := Write(h, "small", src, f32, shape, "none", -1, 0); err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Write(h, "small", src, f32, shape, "none", -1, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_into", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := ReadInto(h, "small", dst, f32, shape, -1, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if fh, err := Read(h, "small", scratch, meta, -1, 0); err != nil || fh != 0 {
				b.Fatal(fh, err)
			}
		}
	})
}
