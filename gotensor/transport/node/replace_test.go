package node

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A full node takes a same-size replacement of a streamed key: the parts
// and the commit that ends them may use the room of the frame they replace
// (the commit's header was refused: "StoreFull: ... 152 more would pass").
func TestFullNodeReplacesStreamedKey(t *testing.T) {
	const capacity = 24 << 20
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	c := dial(t, n.URL())
	s := core.Wrap(c)
	size := int(max(core.StreamMin, 9<<20)) // streamed: parts, then the commit
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(size)}}
	raw := make([]byte, size)
	if err := s.WriteTensor(ctx, "big", meta, raw, "none"); err != nil {
		t.Fatal(err)
	}
	// Fill the node until less than the big frame is free.
	used := n.Store().Usage().Bytes
	if err := c.Put(ctx, "filler", make([]byte, capacity-used-600<<10)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		raw[i] = byte(i + 1)
		if err := s.WriteTensor(ctx, "big", meta, raw, "none"); err != nil {
			t.Fatalf("replacing the streamed key on a full node (round %d): %v", i, err)
		}
	}
	if held := n.Budget().Held(); held != 0 {
		t.Fatalf("budget holds %d bytes after the writes", held)
	}
}
