package remote

import (
	"encoding/binary"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// A client takes from its server only what it asked for: a response must
// answer a request in flight with that request's op, and carry no more
// payload than the request can receive. Anything else is a protocol error,
// found from the header before any payload buffer is allocated: the call
// it claims to answer fails with it, and the connection ends (its stream
// can no longer be trusted).

const (
	// MaxErrorText bounds an error response's message.
	MaxErrorText = 64 << 10
	// maxSmall bounds the payload of a response no request sizes that is
	// never large (usage).
	maxSmall = 1 << 20
	// maxGone bounds the calls on one connection whose callers gave up and
	// whose responses have not come (each is kept to tell its late answer
	// from a stray one): a server that leaves that many unanswered is not
	// answering, and the connection ends.
	maxGone = 1 << 16
)

// FillGrace is how long a call that gives up waits for a payload already
// arriving in its memory (its request's Into) to end, before its link ends
// the connection instead (a 4 MiB piece takes about a millisecond).
var FillGrace = 250 * time.Millisecond

// ErrAbandoned ends a connection that was receiving into the memory of a
// caller that gave up, and did not finish within FillGrace.
var ErrAbandoned = errs.New(errs.Unavailable, "a read into the caller's memory was given up while it arrived, and did not finish")

// AwaitFill returns once nothing writes a caller's memory that a payload
// was arriving in: when filled closes (the payload ended) or ended does
// (the link's reader, or its worker, stopped), and past FillGrace it cuts
// the connection (cut) and waits for either. A nil channel never closes.
func AwaitFill(filled, ended <-chan struct{}, cut func()) {
	t := time.NewTimer(FillGrace)
	defer t.Stop()
	select {
	case <-filled:
		return
	case <-ended:
		return
	case <-t.C:
	}
	cut()
	select {
	case <-filled:
	case <-ended:
	}
}

// Calls are one connection's requests awaiting responses, by id. The
// caller serializes every use (a mutex, or the one thread that owns it).
type Calls struct {
	last uint64 // the last id given
	m    map[uint64]*call
	gone int // calls in m whose callers gave up
}

type call struct {
	ch      chan *wire.Message
	op      wire.Op
	max     uint64 // the most payload a success carries
	gone    bool   // the caller gave up: the response is checked and dropped
	into    []byte // the request's Into
	filling bool   // its response's payload is being received into into
}

// Add gives m an id and registers it: its response, or a message whose
// Refused is the call's error, is sent on ch (which must have room).
func (cs *Calls) Add(m *wire.Message, ch chan *wire.Message) {
	if cs.m == nil {
		cs.m = map[uint64]*call{}
	}
	cs.last++
	m.ID = cs.last
	cs.m[m.ID] = &call{ch: ch, op: m.Op, max: Receivable(m), into: m.Into}
}

// Remove drops call id, whose request was never sent.
func (cs *Calls) Remove(id uint64) {
	if c := cs.m[id]; c != nil {
		if c.gone {
			cs.gone--
		}
		delete(cs.m, id)
	}
}

// Forget marks call id, whose request was sent, as given up: its response
// is still checked when it comes, then dropped. An error says too many
// are unanswered: the connection should end.
func (cs *Calls) Forget(id uint64) error {
	c := cs.m[id]
	if c == nil || c.gone {
		return nil
	}
	c.gone = true
	cs.gone++
	if cs.gone > maxGone {
		return errs.New(errs.Unavailable, "%d requests left unanswered", cs.gone)
	}
	return nil
}

// Admit checks a response's header before its payload of n bytes is
// read: keep says to read it (false: the caller gave up, drop it), into
// is where (the request's Into, when the payload fits it exactly; nil:
// memory the link chooses); an error is a protocol error, already handed
// to the call it names, and the connection must end.
func (cs *Calls) Admit(h *wire.Header, n uint64) (keep bool, into []byte, err error) {
	c, err := cs.check(h, n)
	if err != nil || c.gone {
		return false, nil, err
	}
	if c.into != nil && h.Status == 0 && n == uint64(len(c.into)) {
		c.filling = true
		return true, c.into, nil
	}
	return true, nil, nil
}

// Filling says whether call id's response is being received into its
// request's Into and has not been delivered: a caller that returns before
// that must first stop the receiving (end the connection and wait for its
// reader), so that nothing writes its memory afterwards.
func (cs *Calls) Filling(id uint64) bool {
	c := cs.m[id]
	return c != nil && c.filling
}

// Deliver hands response m, read whole (or its payload dropped), to its
// call; an error is a protocol error, handed to the call it names, and
// the connection must end.
func (cs *Calls) Deliver(m *wire.Message) error {
	c, err := cs.check(&m.Header, m.PayloadLen())
	if err != nil {
		return err
	}
	cs.Remove(m.ID)
	if !c.gone {
		c.ch <- m
	}
	return nil
}

// Refuse fails call id with err (the response it has will not be taken).
func (cs *Calls) Refuse(id uint64, err error) {
	if c := cs.m[id]; c != nil {
		cs.Remove(id)
		if !c.gone {
			c.ch <- &wire.Message{Header: wire.Header{Op: c.op, ID: id}, Refused: err}
		}
	}
}

// check finds the call h answers and checks h and its payload length n
// against that call's request.
func (cs *Calls) check(h *wire.Header, n uint64) (*call, error) {
	c := cs.m[h.ID]
	if c == nil {
		if h.ID == 0 || h.ID > cs.last {
			return nil, wire.Protocol("a %s response to request %d, which was never sent", h.Op, h.ID)
		}
		return nil, wire.Protocol("a %s response to request %d, which was answered already", h.Op, h.ID)
	}
	var err error
	limit := c.max
	if h.Status != 0 {
		limit = MaxErrorText
	}
	switch {
	case h.Op != c.op && !(c.op == wire.OpPutCommit && h.Op == wire.OpPut): // a commit is answered as the put it became
		err = wire.Protocol("a %s response to a %s request", h.Op, c.op)
	case n > limit:
		what := "response"
		if h.Status != 0 {
			what = "error response"
		}
		err = wire.Protocol("a %s %s of %d bytes, more than the %d the request takes", c.op, what, n, limit)
	}
	if err != nil {
		cs.Refuse(h.ID, err)
		return nil, err
	}
	return c, nil
}

// Receivable is the most payload a successful response to request m may
// carry: what it asked for (get-range), a frame or a listing (get, head,
// list: up to the message limit), a usage report, or nothing.
func Receivable(m *wire.Message) uint64 {
	switch m.Op {
	case wire.OpGet, wire.OpHead, wire.OpList:
		return wire.DefaultMaxMessage
	case wire.OpGetRange:
		if len(m.Payload) == 8 {
			return binary.LittleEndian.Uint64(m.Payload)
		}
	case wire.OpUsage:
		return maxSmall
	}
	return 0
}
