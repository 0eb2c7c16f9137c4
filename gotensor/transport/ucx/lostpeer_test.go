//go:build ucx

package ucx_test

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// A peer that leaves mid-upload gives back what its parts held of the
// budget at once (they were held until the upload's idle limit, and
// before that limit, for as long as the node ran).
func TestUCXLostPeerGivesItsPartsBack(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		mem := store.NewMem("mem://node", 16<<20)
		b := serve.NewBudget(16<<20, mem)
		s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem, Budget: b}, ucx.ConfigFor(tls, "127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := dialUCX(t, s.Addr(), tls, "?timeout=10s")
		for i := range 3 {
			m := &wire.Message{Header: wire.Header{Op: wire.OpPutPart, Arg: uint64(i) << 20}, Key: "big", Payload: make([]byte, 1<<20)}
			if _, err := c.Link().Do(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if held := b.Held(); held != 3<<20 {
			t.Fatalf("budget holds %d bytes for 3 MiB of parts", held)
		}
		c.Close()
		for deadline := time.Now().Add(5 * time.Second); b.Held() != 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("budget still holds %d bytes after the peer left", b.Held())
			}
		}
	})
}
