//go:build cgo && linux

package binding

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A freed view's deleter only records it; the binding's next call releases
// it, and so does the sweeper within sweepEvery when no call comes.
func TestFreedViewsAreReleased(t *testing.T) {
	h, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	raw := make([]byte, 1<<20)
	if err := Write(h, "k", raw, int64(tensor.Float32), []int64{1 << 18}, "none", -1, 0); err != nil {
		t.Fatal(err)
	}
	meta := make([]int64, MetaWords)
	view := func() int64 {
		t.Helper()
		addr, err := View(h, "k", meta, 0)
		if err != nil || addr <= 0 {
			t.Fatalf("view: %d %v", addr, err)
		}
		return addr
	}
	live := store.Views.Live.Load()
	freeAsTorch(view())
	if n := OpenViews(); n != 0 { // a call releases what was freed
		t.Fatalf("%d views open after the only one was freed", n)
	}
	if store.Views.Live.Load() != live {
		t.Fatal("the freed view's mapping is still held")
	}
	freeAsTorch(view()) // and no call after it: the sweeper releases it
	deadline := time.Now().Add(20 * sweepEvery)
	for store.Views.Live.Load() != live {
		if time.Now().After(deadline) {
			t.Fatalf("a freed view is still held %v later", 20*sweepEvery)
		}
		time.Sleep(sweepEvery / 10)
	}
}
