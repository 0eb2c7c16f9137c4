package tcp_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// startBudgeted serves a mem:// store of the given capacity with its budget.
func startBudgeted(t *testing.T, capacity int64) (*remote.Client, *store.Mem, *serve.Budget) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := store.NewMem("mem://node", capacity)
	b := serve.NewBudget(capacity, m)
	s := tcp.NewServer(serve.Config{Store: m, Budget: b})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return dial(t, ln.Addr().String(), ""), m, b
}

func waitHeld(t *testing.T, b *serve.Budget, want int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); b.Held() != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("budget holds %d bytes, want %d", b.Held(), want)
		}
	}
}

func part(c *remote.Client, key string, off int64, p []byte) error {
	_, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutPart, Arg: uint64(off)}, Key: key, Payload: p})
	return err
}

// Streamed parts count against the capacity as they arrive, not at the
// commit: the part that would pass it is refused, and a connection's end
// gives back what its uploads held.
func TestStreamedPartsCountAgainstCapacity(t *testing.T) {
	c, _, b := startBudgeted(t, 8<<20)
	chunk := make([]byte, 1<<20)
	var err error
	var off int64
	for ; off < 16<<20 && err == nil; off += int64(len(chunk)) {
		err = part(c, "big", off, chunk)
	}
	if !errs.Is(err, errs.StoreFull) || off > 9<<20 {
		t.Fatalf("after %d bytes of parts: %v", off, err)
	}
	if err := c.Put(ctx, "small", make([]byte, 1<<20)); err != nil { // the refused upload gave its budget back
		t.Fatalf("put after the refused upload: %v", err)
	}
	for i := range 4 {
		if err := part(c, "other", int64(i)<<20, chunk); err != nil {
			t.Fatal(err)
		}
	}
	waitHeld(t, b, 4<<20)
	c.Close()
	waitHeld(t, b, 0)
}

// A payload that would pass the capacity is refused before it is held,
// and the connection goes on serving.
func TestPutOverCapacityIsRefusedUpFront(t *testing.T) {
	c, m, b := startBudgeted(t, 4<<20)
	if err := c.Put(ctx, "k", make([]byte, 5<<20)); !errs.Is(err, errs.StoreFull) {
		t.Fatalf("got %v", err)
	}
	if err := c.Put(ctx, "k", []byte("fits")); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Get(ctx, "k"); string(got) != "fits" {
		t.Fatalf("stored %q", got)
	}
	waitHeld(t, b, 0)
}

// encodedFrame is a real frame's header and payload.
func encodedFrame(t *testing.T, n int) (hdr, payload []byte) {
	t.Helper()
	local := store.NewMem("mem://local", 0)
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(n)}}
	if err := core.Wrap(local).WriteTensor(ctx, "t", meta, bytes.Repeat([]byte{7, 1, 9}, n/3+1)[:n], "none"); err != nil {
		t.Fatal(err)
	}
	f, _ := local.Get(ctx, "t")
	hl, err := frame.HeaderLen(f)
	if err != nil {
		t.Fatal(err)
	}
	return f[:hl], f[hl:]
}

// A commit whose parts do not tile the payload its header announces is refused.
func TestCommitMustTileTheHeadersPayload(t *testing.T) {
	c, m, _ := startBudgeted(t, 0)
	hdr, payload := encodedFrame(t, 64<<10)
	commit := func(key string, h []byte) error {
		_, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: key, Payload: h})
		return err
	}
	part(c, "short", 0, payload[:len(payload)/2]) // the first half only
	if err := commit("short", hdr); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("short upload: %v", err)
	}
	part(c, "long", 0, append(payload, 0)) // one byte too many
	if err := commit("long", hdr); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("long upload: %v", err)
	}
	for _, k := range []string{"short", "long"} {
		if ok, _ := m.Has(ctx, k); ok {
			t.Fatalf("%s was stored", k)
		}
	}
	part(c, "whole", 0, payload)
	if err := commit("whole", hdr); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Get(ctx, "whole"); !bytes.Equal(got, append(append([]byte{}, hdr...), payload...)) {
		t.Fatal("committed frame differs")
	}
}

// The caller's deadline reaches a write the server does not read.
func TestContextDeadlineCutsAStalledWrite(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() { // handshakes, then reads nothing
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		wire.ServerHandshake(nc, nil, 0)
		time.Sleep(10 * time.Second)
	}()
	c := dial(t, ln.Addr().String(), "?timeout=60s")
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Put(cctx, "k", make([]byte, 256<<20))
	if !errs.Is(err, errs.Timeout) || time.Since(start) > 5*time.Second {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
}

// panicStore panics on Put; inline says it never blocks (served on the reading goroutine).
type panicStore struct {
	store.Store
	inline bool
}

func (p panicStore) Caps() store.Caps { return store.Caps{Nonblocking: p.inline} }

func (panicStore) Put(context.Context, string, []byte) error { panic("store bug") }

// A panic while serving a request is that request's Internal error; the
// node goes on serving.
func TestPanicInTheStoreIsInternal(t *testing.T) {
	for _, inline := range []bool{true, false} {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		st := panicStore{store.NewMem("mem://node", 0), inline}
		s := tcp.NewServer(serve.Config{Store: st})
		go s.Serve(ln)
		c := dial(t, ln.Addr().String(), "")
		if err := c.Put(ctx, "k", []byte("v")); !errs.Is(err, errs.Internal) {
			t.Fatalf("inline %v: %v", inline, err)
		}
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("after the panic: %v", err)
		}
		s.Close()
	}
}

func layout(c *remote.Client, key string, hdr uint32, payload uint64) error {
	hb := binary.LittleEndian.AppendUint32(nil, hdr)
	_, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutLayout, Arg: payload}, Key: key, Payload: hb})
	return err
}

// A streamed write that announces its layout has every part received
// straight into the frame: no part passes through the parts' memory, the
// frame reads back whole, and the budget it held is given back.
func TestLaidOutStreamLandsInPlace(t *testing.T) {
	c, m, b := startBudgeted(t, 256<<20)
	hdr, payload := encodedFrame(t, 24<<20)
	for range 2 { // a new key, then its replacement
		sink, err := c.PutStream(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Announce(len(hdr), int64(len(payload))); err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(payload); off += 1 << 20 {
			if err := sink.WritePart(int64(off), payload[off:min(off+1<<20, len(payload))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.Commit(hdr); err != nil {
			t.Fatal(err)
		}
	}
	if idle := b.PartsIdle(); idle != 0 {
		t.Fatalf("%d bytes of parts went through the parts' memory", idle)
	}
	waitHeld(t, b, 0)
	if got, _ := m.Get(ctx, "big"); !bytes.Equal(got, append(append([]byte(nil), hdr...), payload...)) {
		t.Fatal("the stored frame differs from the one sent")
	}
}

// A layout holds its whole frame against the budget when it is announced
// (refused when that would pass the capacity), until its connection ends;
// one announced after the key's parts, or malformed, is refused.
func TestLayoutHoldsTheBudgetUpFront(t *testing.T) {
	c, _, b := startBudgeted(t, 8<<20)
	if err := layout(c, "big", 100, 16<<20); !errs.Is(err, errs.StoreFull) {
		t.Fatalf("a layout past the capacity: %v", err)
	}
	if err := layout(c, "k", 100, 4<<20); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, b, 100+4<<20)
	if err := part(c, "k", 4<<20-10, make([]byte, 20)); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("a part past the laid-out payload: %v", err)
	}
	if err := part(c, "p", 0, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := layout(c, "p", 100, 1<<20); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("a layout after the key's parts: %v", err)
	}
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutLayout, Arg: 1 << 20}, Key: "q", Payload: []byte{1}}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("a layout without its header length: %v", err)
	}
	c.Close()
	waitHeld(t, b, 0)
}
