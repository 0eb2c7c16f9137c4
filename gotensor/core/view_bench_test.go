//go:build linux

package core

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
)

// BenchmarkView is a view of an 8 MiB tensor and its release, the mapping
// clean when it is taken again (as between a model's steps).
func BenchmarkView(b *testing.B) {
	for _, url := range []string{"mem://", "file://" + b.TempDir()} {
		s, err := Open(url)
		if err != nil {
			b.Fatal(err)
		}
		meta := expert
		meta.Shape = []int64{1024, 4096}
		if err := s.WriteTensor(ctx, "e", meta, randomBytes(8<<20, 1), "none"); err != nil {
			b.Fatal(err)
		}
		b.Run(url[:4], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for RecyclePendingForBench() > 0 {
					time.Sleep(10 * time.Microsecond)
				}
				b.StartTimer()
				v, err := s.View(ctx, "e")
				if err != nil || v == nil {
					b.Fatal(err)
				}
				v.Release()
			}
		})
		s.Close()
	}
}

func RecyclePendingForBench() int64 { return store.RecyclePending() }
