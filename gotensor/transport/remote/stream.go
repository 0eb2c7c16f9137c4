package remote

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// A reader fetches a frame in ranges and decodes each as it arrives; a
// writer sends a large frame's payload in parts as they are encoded, then
// its header, which commits them (serve.Uploads is the node's side).

// PartsInFlight is how many parts a client has on the wire per write.
const PartsInFlight = 4

// abortTimeout bounds the best-effort abort of a failed streamed write.
const abortTimeout = 5 * time.Second

// Caps of a client: ranged reads into recycled memory, splices, and
// frames lent from what it recycles; large frames stream in parts, except
// over a link that moves them whole and one-sided.
func (c *Client) Caps() store.Caps {
	caps := store.Caps{Lender: c, Ranges: c, Recycler: c, Splicer: c}
	if l, ok := c.link.(OneSided); !ok || !l.OneSided() {
		caps.Stream = c
	}
	if l, ok := c.link.(ReceivesInto); ok && l.ReceivesInto() {
		caps.RangesInto = c
	}
	return caps
}

// ReceivesInto is a Link that receives a response's payload into its
// request's Into (see wire.Message).
type ReceivesInto interface{ ReceivesInto() bool }

// ranges is the memory ranges of frames are received into, given back by
// the reader once decoded (RecycleRange), so a large read does not make a
// frame's worth of garbage: ranges are a piece each, of a few sizes.
var ranges = pool.NewBytes(128<<20, 64)

// RangeBuffer is where the payload of n bytes of a response carrying frame
// bytes (get-range, get) lands (a transport's receive path calls it);
// others get new memory.
func RangeBuffer(m *wire.Message, n uint64) []byte {
	if (m.Op == wire.OpGetRange || m.Op == wire.OpGet) && n >= minRecycled {
		return ranges.GetRounded(int(n))
	}
	return make([]byte, n)
}

// minRecycled is the least range worth recycling.
const minRecycled = 64 << 10

// GrowFrom is the most memory a response no request sizes (get, head,
// list: up to the message limit) is given before its bytes arrive, on a
// link that reads a payload as a stream: a larger one grows as they do,
// so what a client holds follows what its server sends, not what it
// announces.
const GrowFrom = 64 << 20

// StreamBuffer is RangeBuffer for a link that reads payloads as a stream
// (tcp): a payload over GrowFrom that no request sized grows as it arrives.
func StreamBuffer(m *wire.Message, n uint64) []byte {
	if n > GrowFrom && Receivable(&wire.Message{Header: wire.Header{Op: m.Op}}) == wire.DefaultMaxMessage {
		return make([]byte, 0, GrowFrom)
	}
	return RangeBuffer(m, n)
}

// RecycleRange takes back a range GetRange returned, or a frame Get did
// (see store.RangeRecycler).
func (c *Client) RecycleRange(b []byte) {
	if cap(b) >= minRecycled {
		ranges.Put(b)
	}
}

// LendFrame lends memory for a whole frame about to be Put (see
// store.Lender) over a link that sends in the call: Put gives it back once
// sent, for the next frame or range. Over others it is new memory.
func (c *Client) LendFrame(n int) []byte {
	if l, ok := c.link.(InCall); !ok || !l.SendsInCall() || n < minRecycled {
		return make([]byte, n)
	}
	return c.lent.Get(n)
}

// ReturnFrame takes back a frame LendFrame lent that was not Put.
func (c *Client) ReturnFrame(b []byte) { c.recycleLent(b) }

// recycleLent gives b back if it is a frame LendFrame lent; any other
// memory (a caller's own frame) is left alone.
func (c *Client) recycleLent(b []byte) { c.lent.Back(b) }

// GetRange fetches bytes [off, off+n) of the frame under key.
func (c *Client) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	m, err := c.getRange(ctx, key, off, n, nil)
	if err != nil {
		return nil, 0, err
	}
	return m.Payload, int64(m.Arg), nil
}

// GetRangeInto fetches bytes [off, off+len(dst)) of the frame under key
// into dst: over a link that ReceivesInto, straight from the socket; a
// shorter range (the frame ended, or changed) is copied there.
func (c *Client) GetRangeInto(ctx context.Context, key string, off int64, dst []byte) (int, int64, error) {
	var into []byte
	if l, ok := c.link.(ReceivesInto); ok && l.ReceivesInto() && len(dst) > 0 {
		into = dst
	}
	m, err := c.getRange(ctx, key, off, int64(len(dst)), into)
	if err != nil {
		return 0, 0, err
	}
	got := m.Payload
	if len(got) > 0 && len(dst) > 0 && &got[0] == &dst[0] {
		return len(got), int64(m.Arg), nil
	}
	n := copy(dst, got)
	c.RecycleRange(got)
	return n, int64(m.Arg), nil
}

// getRange asks for bytes [off, off+n) of key's frame, received into into
// where the link can (see wire.Message.Into).
func (c *Client) getRange(ctx context.Context, key string, off, n int64, into []byte) (*wire.Message, error) {
	if off < 0 || n < 0 {
		return nil, errs.New(errs.InvalidArgument, "range at %d of %d bytes", off, n)
	}
	var nb [8]byte
	binary.LittleEndian.PutUint64(nb[:], uint64(n))
	return c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpGetRange, Arg: uint64(off)}, Key: key, Payload: nb[:], Into: into})
}

// PutStream starts a streamed write of key; ctx bounds every part and the
// commit. The node knows an upload by its key and connection, so a
// client streams one write of a key at a time: a second waits for the
// first's Commit or Abort (see keyLocks).
func (c *Client) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if !c.streaming.lock(ctx, key) {
		return nil, CtxErr(ctx, wire.OpPutPart, c.url)
	}
	select { // the node keeps at most wire.MaxUploads open per connection: wait for one to end
	case c.uploads <- struct{}{}:
	case <-ctx.Done():
		c.streaming.unlock(key)
		return nil, CtxErr(ctx, wire.OpPutPart, c.url)
	}
	return &partSink{c: c, ctx: ctx, key: key, sem: make(chan struct{}, PartsInFlight)}, nil
}

type partSink struct {
	c   *Client
	ctx context.Context
	key string
	sem chan struct{}
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
	end sync.Once // the write's end: gives the upload slot and the key back
}

// keyLocks are the keys a client is streaming a write of, each held from
// PutStream to its Commit or Abort.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	held chan struct{} // a token while a write streams
	refs int           // the writes holding or waiting for it
}

// lock waits for key's turn; false when ctx ends first.
func (ks *keyLocks) lock(ctx context.Context, key string) bool {
	ks.mu.Lock()
	if ks.m == nil {
		ks.m = map[string]*keyLock{}
	}
	l := ks.m[key]
	if l == nil {
		l = &keyLock{held: make(chan struct{}, 1)}
		ks.m[key] = l
	}
	l.refs++
	ks.mu.Unlock()
	select {
	case l.held <- struct{}{}:
		return true
	case <-ctx.Done():
		ks.drop(key, l)
		return false
	}
}

func (ks *keyLocks) unlock(key string) {
	ks.mu.Lock()
	l := ks.m[key]
	ks.mu.Unlock()
	<-l.held
	ks.drop(key, l)
}

// drop ends one write's interest in l.
func (ks *keyLocks) drop(key string, l *keyLock) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(ks.m, key)
	}
}

// LaysOut is a link whose server takes a streamed frame's layout ahead of
// its parts (wire.OpPutLayout) and receives each part straight into the
// frame, with no copy at the commit.
type LaysOut interface{ LaysOut() bool }

// Announce sends the frame's layout ahead of the first part, and waits for
// the answer (so that it arrives before any part), where the server takes
// it; elsewhere the parts are copied at the commit as before.
func (p *partSink) Announce(header int, payload int64) error {
	if l, ok := p.c.link.(LaysOut); !ok || !l.LaysOut() || header <= 0 || payload <= 0 {
		return nil
	}
	var hb [4]byte
	binary.LittleEndian.PutUint32(hb[:], uint32(header))
	_, err := p.c.link.Do(p.ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutLayout, Arg: uint64(payload)}, Key: p.key, Payload: hb[:]})
	return err
}

// InCall is a Link done with a request's payload when Do returns, however
// it returns (its send is part of the call).
type InCall interface{ SendsInCall() bool }

// BorrowsParts: Commit and Abort wait for every part's Do, and a link
// that sends in the call is done with the part by then.
func (p *partSink) BorrowsParts() bool {
	l, ok := p.c.link.(InCall)
	return ok && l.SendsInCall()
}

func (p *partSink) release() {
	<-p.c.uploads
	p.c.streaming.unlock(p.key)
}

func (p *partSink) WritePart(off int64, part []byte) error {
	if err := p.failed(); err != nil {
		return err
	}
	select {
	case p.sem <- struct{}{}:
	case <-p.ctx.Done():
		return CtxErr(p.ctx, wire.OpPutPart, p.c.url)
	}
	p.wg.Add(1)
	go func() {
		defer func() { <-p.sem; p.wg.Done() }()
		defer func() {
			if r := recover(); r != nil {
				p.setErr(errs.New(errs.Internal, "panic sending part of %q: %v", p.key, r))
			}
		}()
		_, err := p.c.link.Do(p.ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutPart, Arg: uint64(off)}, Key: p.key, Payload: part})
		if err != nil {
			p.setErr(err)
		}
	}()
	return nil
}

func (p *partSink) setErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *partSink) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Commit sends the header once every part is through. A write that
// fails is aborted before the key is given back, so no part of it is left
// open for the key's next write on this connection.
func (p *partSink) Commit(hdr []byte) error {
	p.wg.Wait()
	err := p.failed()
	if err == nil {
		_, err = p.c.link.Do(p.ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: p.key, Payload: hdr})
	}
	if err != nil {
		p.Abort()
		return err
	}
	p.end.Do(p.release)
	return nil
}

// Abort drops the parts sent (best effort: a lost connection drops them
// too); after Commit, or a second time, it does nothing.
func (p *partSink) Abort() {
	p.end.Do(func() {
		defer p.release()
		p.wg.Wait()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), abortTimeout)
		defer cancel()
		p.c.link.Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutAbort}, Key: p.key})
	})
}

// Splice edits the frame under key on the node (see store.Splicer): only
// the re-encoded chunks cross the link.
func (c *Client) Splice(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	if off < 0 {
		return false, errs.New(errs.InvalidArgument, "splice at %d", off)
	}
	m, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpSplice, Arg: uint64(off)}, Key: key,
		Payload: wire.SplicePayload(old, header, n, data)})
	if err != nil {
		return false, err
	}
	return m.Arg == 1, nil
}
