package node

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A node's capacity counts keys too, not frame bytes alone: a 1 MiB node
// took 23,831 small frames under 1 KiB keys (and 29 MiB of memory).
func TestNodeCapacityCountsKeys(t *testing.T) {
	const capacity, frame = 1 << 20, 44
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	c := dial(t, n.URL())
	pad := strings.Repeat("k", 1016)
	stored := 0
	for ; stored < 4096; stored++ {
		if err := c.Put(ctx, fmt.Sprintf("%s%08d", pad, stored), make([]byte, frame)); err != nil {
			if !errs.Is(err, errs.StoreFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if stored*(1024+frame) >= capacity || stored < capacity/(1024+frame+1024) {
		t.Fatalf("a %d-byte node took %d frames of %d bytes under 1 KiB keys", capacity, stored, frame)
	}
	if u := c.Usage(); u.Keys != int64(stored) || u.Bytes != int64(stored*frame) { // Bytes: the frames'
		t.Fatalf("usage %+v after %d frames", u, stored)
	}
}
