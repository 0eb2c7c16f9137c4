package remote

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

func add(cs *Calls, m *wire.Message) chan *wire.Message {
	ch := make(chan *wire.Message, 1)
	cs.Add(m, ch)
	return ch
}

// calls4 are a ping, a get-range of 4096 bytes, a commit and a get (ids 1 to 4).
func calls4() (cs *Calls, ping, rng, commit, get chan *wire.Message) {
	cs = &Calls{}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], 4096)
	ping = add(cs, &wire.Message{Header: wire.Header{Op: wire.OpPing}})
	rng = add(cs, &wire.Message{Header: wire.Header{Op: wire.OpGetRange}, Payload: n[:]})
	commit = add(cs, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}})
	get = add(cs, &wire.Message{Header: wire.Header{Op: wire.OpGet}})
	return
}

// A response is taken only as an answer to its request: its id, its op
// (a commit's answer is a put's) and no more payload than it asked for.
func TestCallsTakeOnlyWhatWasAsked(t *testing.T) {
	for _, tc := range []struct {
		h    wire.Header
		n    uint64
		fits bool
	}{
		{wire.Header{Op: wire.OpGetRange, ID: 2}, 4096, true},
		{wire.Header{Op: wire.OpGetRange, ID: 2}, 4097, false},
		{wire.Header{Op: wire.OpPing, ID: 1}, 1, false},
		{wire.Header{Op: wire.OpPing, ID: 1, Status: 1}, MaxErrorText, true},
		{wire.Header{Op: wire.OpPing, ID: 1, Status: 1}, MaxErrorText + 1, false},
		{wire.Header{Op: wire.OpPut, ID: 3}, 0, true},
		{wire.Header{Op: wire.OpHas, ID: 1}, 0, false},
		{wire.Header{Op: wire.OpGet, ID: 4}, 60 << 30, true},
		{wire.Header{Op: wire.OpPing, ID: 5}, 0, false},
	} {
		cs, _, _, _, _ := calls4()
		if _, _, err := cs.Admit(&tc.h, tc.n); (err == nil) != tc.fits || err != nil && !errs.Is(err, errs.CorruptData) {
			t.Errorf("%s id %d status %d, %d bytes: %v", tc.h.Op, tc.h.ID, tc.h.Status, tc.n, err)
		}
	}
	cs, ping, rng, commit, get := calls4()
	// delivered, a response leaves its call; a second answer is refused
	for _, m := range []*wire.Message{{Header: wire.Header{Op: wire.OpPing, ID: 1}}, {Header: wire.Header{Op: wire.OpPut, ID: 3}}} {
		if err := cs.Deliver(m); err != nil {
			t.Fatal(err)
		}
	}
	if (<-ping).ID != 1 || (<-commit).ID != 3 {
		t.Fatal("answers went astray")
	}
	if err := cs.Deliver(&wire.Message{Header: wire.Header{Op: wire.OpPing, ID: 1}}); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("a second answer: %v", err)
	}
	// a misfit is the error of the call it names
	if err := cs.Deliver(&wire.Message{Header: wire.Header{Op: wire.OpGet, ID: 2}}); err == nil {
		t.Fatal("a get answering a get-range")
	}
	if m := <-rng; !errs.Is(m.Refused, errs.CorruptData) {
		t.Fatalf("the get-range got %+v", m)
	}
	// an answer to a call given up is dropped
	if err := cs.Forget(4); err != nil {
		t.Fatal(err)
	}
	if keep, _, err := cs.Admit(&wire.Header{Op: wire.OpGet, ID: 4}, 10); keep || err != nil {
		t.Fatalf("keep %v, %v", keep, err)
	}
	if err := cs.Deliver(&wire.Message{Header: wire.Header{Op: wire.OpGet, ID: 4}}); err != nil || len(get) != 0 || len(cs.m) != 0 {
		t.Fatalf("%v, %d calls left", err, len(cs.m))
	}
}

// Too many calls given up and unanswered end the connection.
func TestCallsGivenUpAreBounded(t *testing.T) {
	var cs Calls
	for i := 0; i < maxGone; i++ {
		m := &wire.Message{Header: wire.Header{Op: wire.OpPing}}
		add(&cs, m)
		if err := cs.Forget(m.ID); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	m := &wire.Message{Header: wire.Header{Op: wire.OpPing}}
	add(&cs, m)
	if err := cs.Forget(m.ID); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("got %v", err)
	}
}

// A call's deadline is the sooner of the link's timeout and its context's,
// named as the caller set it.
func TestDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, within := Deadline(ctx, 5*time.Second); within != 2*time.Second {
		t.Fatalf("within %v", within)
	}
	if _, within := Deadline(context.Background(), 5*time.Second); within != 5*time.Second {
		t.Fatalf("within %v", within)
	}
	for _, c := range []struct{ left, want time.Duration }{ // what is left of a timeout when the link sees it
		{299870 * time.Microsecond, 300 * time.Millisecond},
		{1999 * time.Millisecond, 2 * time.Second},
		{29995 * time.Millisecond, 30 * time.Second},
		{1498 * time.Microsecond, 1500 * time.Microsecond},
	} {
		if got := roundTimeout(c.left); got != c.want {
			t.Fatalf("%v left: named %v, want %v", c.left, got, c.want)
		}
	}
}
