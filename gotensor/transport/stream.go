package transport

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// Streamed frames. A client sends a large frame's payload in parts as they
// are encoded, then its header; the server assembles the frame and stores
// it only at commit, so a lost connection leaves nothing behind. A reader
// fetches a frame in ranges and decodes each as it arrives.

const (
	maxUploads    = 16 // streamed writes open at once on one connection
	partsInFlight = 4  // parts a client has on the wire per write
)

// uploads are one connection's streamed writes in progress.
type uploads struct {
	mu    sync.Mutex
	open  map[string]*store.Parts
	limit uint64
}

func newUploads(limit uint64) *uploads {
	return &uploads{open: map[string]*store.Parts{}, limit: limit}
}

// handle serves put-part and put-abort, and turns put-commit into the put
// of the assembled frame; it returns the response for the first two, or
// nil when m (rewritten) goes on to the store.
func (u *uploads) handle(m *message) *message {
	resp := &message{header: header{op: m.op, id: m.id}}
	fail := func(err error) *message {
		resp.status, resp.payload = statusOf(err), []byte(err.Error())
		return resp
	}
	if err := store.ValidateKey(m.key); err != nil {
		return fail(err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.open[m.key]
	switch m.op {
	case OpPutPart:
		if p == nil {
			if len(u.open) >= maxUploads {
				return fail(errs.New(errs.InvalidArgument, "more than %d streamed writes open on one connection", maxUploads))
			}
			p = store.NewParts(int64(u.limit))
			u.open[m.key] = p
		}
		if err := p.Add(int64(m.arg), m.payload); err != nil {
			delete(u.open, m.key)
			return fail(err)
		}
		return resp
	case OpPutAbort:
		delete(u.open, m.key)
		return resp
	case OpPutCommit:
		delete(u.open, m.key)
		if p == nil {
			return fail(errs.New(errs.InvalidArgument, "commit of %q without parts", m.key))
		}
		f, err := p.Frame(m.payload)
		if err != nil {
			return fail(err)
		}
		m.op, m.payload = OpPut, f
		return nil
	}
	return fail(errs.New(errs.Internal, "not a streamed-write op"))
}

func isUpload(op Op) bool { return op == OpPutPart || op == OpPutCommit || op == OpPutAbort }

// Streams is false on a link that moves large frames whole and one-sided
// (ucx:// with rma): pieces would bypass that path.
func (c *Client) Streams() bool {
	if l, ok := c.link.(interface{ streams() bool }); ok {
		return l.streams()
	}
	return true
}

// GetRange fetches bytes [off, off+n) of the frame under key.
func (c *Client) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, 0, err
	}
	if off < 0 || n < 0 {
		return nil, 0, errs.New(errs.InvalidArgument, "range at %d of %d bytes", off, n)
	}
	var nb [8]byte
	binary.LittleEndian.PutUint64(nb[:], uint64(n))
	m, err := c.link.do(ctx, &message{header: header{op: OpGetRange, arg: uint64(off)}, key: key, payload: nb[:]})
	if err != nil {
		return nil, 0, err
	}
	return m.payload, int64(m.arg), nil
}

// PutStream starts a streamed write of key.
func (c *Client) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return &partSink{c: c, ctx: ctx, key: key, sem: make(chan struct{}, partsInFlight)}, nil
}

type partSink struct {
	c   *Client
	ctx context.Context
	key string
	sem chan struct{}
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (p *partSink) WritePart(off int64, part []byte) error {
	if err := p.failed(); err != nil {
		return err
	}
	p.sem <- struct{}{}
	p.wg.Add(1)
	go func() {
		defer func() { <-p.sem; p.wg.Done() }()
		_, err := p.c.link.do(p.ctx, &message{header: header{op: OpPutPart, arg: uint64(off)}, key: p.key, payload: part})
		if err != nil {
			p.mu.Lock()
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
		}
	}()
	return nil
}

func (p *partSink) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *partSink) Commit(hdr []byte) error {
	p.wg.Wait()
	if err := p.failed(); err != nil {
		p.Abort()
		return err
	}
	_, err := p.c.link.do(p.ctx, &message{header: header{op: OpPutCommit}, key: p.key, payload: hdr})
	return err
}

func (p *partSink) Abort() {
	p.wg.Wait()
	p.c.link.do(context.Background(), &message{header: header{op: OpPutAbort}, key: p.key}) // best effort: a lost connection drops it too
}
