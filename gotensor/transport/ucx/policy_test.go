//go:build ucx

package ucx_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

func waitPeers(t *testing.T, s *ucx.Server, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ucx.Peers(s) != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d endpoints, want %d", ucx.Peers(s), want)
		}
	}
}

// A peer that has not authenticated gets nothing allocated for a
// rendezvous payload: the node drops it before receiving.
func TestUCXNothingAllocatedBeforeAuthentication(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, mem := startUCX(t, tls, "tok", 0)
		payload := make([]byte, 64<<20)
		evil := ucx.DialUnauthenticated(t, s.Addr(), tls)
		waitPeers(t, s, 1)
		before := allocated()
		ucx.SendRaw(evil, 2, wire.AMHeader(&wire.Message{Header: wire.Header{Op: wire.OpPut}, Key: "k"}, len(payload)), payload)
		waitPeers(t, s, 0)
		if got := allocated() - before; got > 16<<20 {
			t.Fatalf("%d bytes allocated for an unauthenticated peer", got)
		}
		if ok, _ := mem.Has(ctx, "k"); ok {
			t.Fatal("stored")
		}
	})
}

// The budget refuses a rendezvous payload past the capacity before
// receiving it; the peer stays connected and its budget comes back.
func TestUCXPayloadOverCapacityIsRefusedUpFront(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		mem := store.NewMem("mem://node", 4<<20)
		b := serve.NewBudget(4<<20, mem)
		s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem, Budget: b}, ucx.ConfigFor(tls, "127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := dialUCX(t, s.Addr(), tls, "?timeout=10s")
		before := allocated()
		if err := c.Put(ctx, "big", make([]byte, 8<<20)); !errs.Is(err, errs.StoreFull) {
			t.Fatalf("got %v", err)
		}
		if got := allocated() - before; got > 8<<20+4<<20 { // the client's own buffer, not the node's
			t.Fatalf("%d bytes allocated", got)
		}
		if err := c.Put(ctx, "small", make([]byte, 1<<20)); err != nil {
			t.Fatalf("after the refusal: %v", err)
		}
		if n := b.Held(); n != 0 {
			t.Fatalf("budget still holds %d bytes", n)
		}
	})
}

// A refused rendezvous put keeps the connection: the server answers
// before taking the payload, and the client waits for UCX to let go of it
// rather than cutting the request short (which failed every other call in
// flight on the connection as Unavailable).
func TestUCXRefusalKeepsTheConnection(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		mem := store.NewMem("mem://node", 4<<20)
		s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem, Budget: serve.NewBudget(4<<20, mem)}, ucx.ConfigFor(tls, "127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := dialUCX(t, s.Addr(), tls, "?timeout=10s")
		if err := c.Put(ctx, "small", make([]byte, 1<<10)); err != nil {
			t.Fatal(err)
		}
		conn := ucx.ConnOf(c)
		big := make([]byte, 8<<20)
		for i := range 20 {
			if err := c.Put(ctx, "big", big); !errs.Is(err, errs.StoreFull) {
				t.Fatalf("put %d: got %v, want StoreFull", i, err)
			}
			if ucx.ConnOf(c) != conn {
				t.Fatalf("put %d: the refusal ended the connection", i)
			}
		}
	})
}

// A one-sided put is held to the budget before its buffer is allocated.
func TestUCXOneSidedPutIsBudgeted(t *testing.T) {
	mem := store.NewMem("mem://node", 1<<20)
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem}, ucx.ConfigFor("sm,tcp", "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialUCX(t, s.Addr(), "sm,tcp", "")
	desc := (&wire.RMADesc{Addr: 4096, Length: 32 << 30, Rkey: []byte{1, 2, 3, 4}}).Encode()
	before := allocated()
	_, err = c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutRMA}, Key: "k", Payload: desc})
	if !errs.Is(err, errs.StoreFull) {
		t.Fatalf("got %v", err)
	}
	if got := allocated() - before; got > 1<<20 {
		t.Fatalf("%d bytes allocated for a descriptor", got)
	}
}
