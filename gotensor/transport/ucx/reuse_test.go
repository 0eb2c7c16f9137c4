//go:build ucx

package ucx_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

// lendCounter is a mem:// store counting the frame memory it lends and the
// leases it gives.
type lendCounter struct {
	*store.Mem
	lent, leases atomic.Int64
}

func (l *lendCounter) LendFrame(n int) []byte { l.lent.Add(1); return l.Mem.LendFrame(n) }
func (l *lendCounter) Caps() store.Caps {
	c := l.Mem.Caps()
	c.Lender, c.Leaser = l, l
	return c
}
func (l *lendCounter) Lease(c context.Context, key string) ([]byte, func(), error) {
	l.leases.Add(1)
	return l.Mem.Lease(c, key)
}

// A node replacing frames reuses their memory, as the tcp node does: every
// put that arrives by rendezvous (or one-sided) lands in memory the store
// lends, and every get (one-sided too) leases the frame, so replaced
// frames go back to the store's pool and come out again. A node
// that allocated each payload anew made garbage of every write: its heap,
// and so its RSS, grew with the traffic up to twice what it held.
func TestUCXPutsReuseTheStoresMemory(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		for _, rma := range []string{"", "?rma=64KiB"} {
			t.Run("rma="+rma, func(t *testing.T) {
				lc := &lendCounter{Mem: store.NewMem("mem://node", 0)}
				s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: lc}, ucx.ConfigFor(tls, "127.0.0.1:0"))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				c := dialUCX(t, s.Addr(), tls, rma)
				const puts, size = 48, 1 << 20
				frames := [2][]byte{bytes.Repeat([]byte{1, 2, 3}, size/3), bytes.Repeat([]byte{4, 5}, size/2)}
				if err := c.Put(ctx, "warm", frames[0]); err != nil { // the connection's own buffers
					t.Fatal(err)
				}
				before := allocated()
				for i := range puts {
					if err := c.Put(ctx, fmt.Sprintf("k%d", i%2), frames[i%2]); err != nil {
						t.Fatal(err)
					}
				}
				alloc := allocated() - before
				if n := lc.lent.Load(); n < puts {
					t.Errorf("%d of %d puts landed in memory the store lent", n, puts+1)
				}
				// the node holds 2 frames and 2 idle ones: a few MiB made for
				// 48 MiB written (each payload anew: 48 MiB)
				if alloc > puts*size/4 {
					t.Errorf("%d MiB allocated for %d puts of 1 MiB replacing 2 keys", alloc>>20, puts)
				}
				for i, want := range frames {
					if got, err := c.Get(ctx, fmt.Sprintf("k%d", i)); err != nil || !bytes.Equal(got, want) {
						t.Fatalf("get: %v", err)
					}
				}
				if n := lc.leases.Load(); n != 2 {
					t.Errorf("%d of 2 gets leased the frame", n)
				}
			})
		}
	})
}
