package serve

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// A commit that fails (no parts, or parts that do not tile its header's
// payload) gives back what its header holds of the budget.
func TestFailedCommitGivesItsBudgetBack(t *testing.T) {
	b := NewBudget(1<<20, store.NewMem("mem://t", 1<<20))
	u := NewUploads(Config{Store: store.NewMem("mem://t", 0), Budget: b})
	defer u.Close()
	send := func(op wire.Op, payload []byte) *wire.Message {
		m := &wire.Message{Header: wire.Header{Op: op}, Key: "k"}
		buf, err := b.Alloc(m, uint64(len(payload)))
		if err != nil {
			t.Fatal(err)
		}
		copy(buf, payload)
		m.Payload = buf
		return u.Handle(m)
	}
	if r := send(wire.OpPutCommit, []byte("header")); r == nil || r.Status == 0 {
		t.Fatal("commit without parts accepted")
	}
	if r := send(wire.OpPutPart, []byte("part")); r == nil || r.Status != 0 {
		t.Fatalf("part: %v", r)
	}
	if r := send(wire.OpPutCommit, []byte("not a frame header")); r == nil || r.Status == 0 {
		t.Fatal("commit of a bad header accepted")
	}
	if held := b.Held(); held != 0 {
		t.Fatalf("budget holds %d bytes after the failed commits", held)
	}
}
