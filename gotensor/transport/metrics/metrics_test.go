package metrics

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// BenchmarkServed is what the metrics add to each request served.
func BenchmarkServed(b *testing.B) {
	n := New(store.NewMem("mem://b", 0), nil)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Served(wire.OpGet, 0, 0, 4096, 20*time.Microsecond)
		}
	})
}
