package serve

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// lending is a store that lends frame memory and leases frames, counting both.
type lending struct {
	*store.Mem
	lent, returned, leases, released atomic.Int64
}

func (l *lending) LendFrame(n int) []byte { l.lent.Add(1); return make([]byte, n) }
func (l *lending) Caps() store.Caps {
	c := l.Mem.Caps()
	c.Lender, c.Leaser = l, l
	return c
}
func (l *lending) ReturnFrame([]byte) { l.returned.Add(1) }
func (l *lending) Lease(ctx context.Context, key string) ([]byte, func(), error) {
	b, err := l.Mem.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	l.leases.Add(1)
	return b, func() { l.released.Add(1) }, nil
}

// A put is received into memory the store lends, handed back when the store
// refuses it; a get carries a lease that the sender ends.
func TestLentAndLeasedFrames(t *testing.T) {
	st := &lending{Mem: store.NewMem("mem://t", 100+store.KeyOverhead+1)} // 100 bytes of frames under "k"
	b := NewBudget(1000, st)
	put := func(n int) *wire.Message {
		m := &wire.Message{Header: wire.Header{Op: wire.OpPut}, Key: "k"}
		buf, err := b.Alloc(m, uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		m.Payload = bytes.Repeat([]byte{1}, len(buf))
		return Handle(context.Background(), st, m)
	}
	if r := put(10); r.Status != 0 {
		t.Fatalf("put: %s", r.Payload)
	}
	if r := put(200); r.Status == 0 { // past the store's own capacity
		t.Fatal("put past capacity accepted")
	}
	if st.lent.Load() != 2 || st.returned.Load() != 1 {
		t.Fatalf("lent %d, returned %d", st.lent.Load(), st.returned.Load())
	}
	r := Handle(context.Background(), st, &wire.Message{Header: wire.Header{Op: wire.OpGet}, Key: "k"})
	if len(r.Payload) != 10 || st.leases.Load() != 1 {
		t.Fatalf("get %d bytes, %d leases", len(r.Payload), st.leases.Load())
	}
	r.Done()
	r.Done()
	if st.released.Load() != 1 {
		t.Fatalf("%d releases", st.released.Load())
	}
}

// On a node, idle frame memory leaves room for the payloads being
// received: a replaced frame is kept for the next write only while it fits
// beside what the store holds and what the budget has reserved, so that
// the node's memory stays within its capacity.
func TestIdleFramesLeaveRoomForPayloads(t *testing.T) {
	ctx := context.Background()
	const mib = 1 << 20
	st := store.NewMem("mem://", 64*mib)
	b := NewBudget(64*mib, st)
	st.SetIdleRoom(b.IdleRoom)
	kept := func() bool { // a 16 MiB frame replaced: is its memory lent to the next write?
		a := st.LendFrame(16 * mib)
		st.Put(ctx, "k", a)
		st.Put(ctx, "k", make([]byte, 16*mib))
		next := st.LendFrame(16 * mib)
		st.ReturnFrame(next)
		return &next[0] == &a[0]
	}
	release, err := b.Reserve(40 * mib)
	if err != nil {
		t.Fatal(err)
	}
	if kept() {
		t.Fatal("16 MiB kept idle beside 16 stored and 40 being received in 64")
	}
	release()
	if !kept() {
		t.Fatal("16 MiB not kept idle beside 16 stored in 64")
	}
}
