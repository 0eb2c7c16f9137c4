//go:build ucx

package ucx_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

// A client putting frames it lent and reading them back makes no garbage of
// their size, as over tcp: a put's frame is memory the client lends and
// takes back once sent, and a get's payload lands in memory the reader
// gives back (RecycleRange). A client that allocated each anew made two
// frames' worth of garbage per round trip, and paid their page faults.
func TestUCXClientRecyclesFrames(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "", 0)
		c := dialUCX(t, s.Addr(), tls, "")
		const rounds, size = 16, 4 << 20
		roundTrip := func(i int) {
			f := c.LendFrame(size)
			for j := range f {
				f[j] = byte(i + j)
			}
			if err := c.Put(ctx, "k", f); err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != size || got[0] != byte(i) || got[size-1] != byte(i+size-1) {
				t.Fatalf("round %d read back other bytes", i)
			}
			c.RecycleRange(got)
		}
		roundTrip(0) // the pool's first frames
		before := allocated()
		for i := 1; i <= rounds; i++ {
			roundTrip(i)
		}
		if per := (allocated() - before) / rounds; per > size/4 {
			t.Fatalf("a round trip of a %d MiB frame allocated %.1f MiB", size>>20, float64(per)/(1<<20))
		}
	})
}

// A put cut short by its context returns only once UCX no longer reads its
// frame, so the frame can go back to the pool: the cancel ends the
// connection, the node stores nothing half sent, and the next call
// reconnects. Returning while the send went on let the next frame coded
// into that memory change bytes still on their way.
func TestUCXCancelledPutLetsGoOfItsFrame(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, mem := startUCX(t, tls, "", 0)
		c := dialUCX(t, s.Addr(), tls, "")
		const size = 256 << 20
		f := c.LendFrame(size)
		for i := range f {
			f[i] = byte(i)
		}
		want := bytes.Clone(f[:1<<20])
		cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		defer cancel()
		err := c.Put(cctx, "big", f)
		if err == nil {
			t.Skip("the put finished within 5 ms")
		}
		if !errs.Is(err, errs.Timeout) {
			t.Fatalf("got %v", err)
		}
		if n := ucx.OpsInFlight(c); n != 0 {
			t.Fatalf("%d operations still in flight once the cancelled put returned", n)
		}
		c.ReturnFrame(f)
		clear(f) // what reusing the frame would do
		time.Sleep(50 * time.Millisecond)
		if got, err := mem.Get(ctx, "big"); err == nil && !bytes.Equal(got[:len(want)], want) {
			t.Fatal("the node stored bytes changed after the put returned")
		}
		if err := c.Put(ctx, "small", []byte("after")); err != nil {
			t.Fatalf("the next call: %v", err)
		}
	})
}
