package store

import (
	"context"
	"sort"
	"sync"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// RangeReader is a store that can return part of a frame, so a reader
// decodes the first pieces of a large tensor while later ones are in flight.
type RangeReader interface {
	// GetRange returns up to n bytes of the frame from off, and the
	// frame's total size.
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error)
}

// RangeRecycler is a RangeReader whose ranges may be handed back once
// read (decoded, copied out), for the memory of later ones: a reader that
// would otherwise make garbage of a whole frame per read.
type RangeRecycler interface {
	// RecycleRange takes back b, a range GetRange (or a frame Get)
	// returned; nothing may use b afterwards.
	RecycleRange(b []byte)
}

// StreamWriter is a store that takes a frame in parts, so a writer sends
// the first chunks of a large tensor while later ones are being encoded.
type StreamWriter interface {
	PutStream(ctx context.Context, key string) (PartSink, error)
}

// Streams is true when every node that answered streams.
func (s *Sharded) Streams() bool {
	for _, n := range s.nodes {
		if _, late := n.(*lateNode); !late && !n.Caps().Streams() {
			return false
		}
	}
	return true
}

// PartSink receives one frame: payload parts by offset (after the header),
// in any order, then the header. Nothing is visible under the key until
// Commit succeeds; Abort (or a lost connection) leaves the store unchanged.
type PartSink interface {
	// WritePart takes part (retained until Commit or Abort) and may return
	// before it has reached the store.
	WritePart(off int64, part []byte) error
	Commit(header []byte) error
	Abort()
	// BorrowsParts says the sink is done with every part once Commit or
	// Abort has returned, so a writer may hand it the caller's own memory
	// (a tensor's raw chunks) rather than copies.
	BorrowsParts() bool
}

// Parts assembles a frame from parts: the same checks every store makes
// before a streamed frame becomes visible.
type Parts struct {
	mu    sync.Mutex
	parts map[int64][]byte
	size  int64
	limit int64
}

// NewParts collects parts of a payload of at most limit bytes.
func NewParts(limit int64) *Parts { return &Parts{parts: map[int64][]byte{}, limit: limit} }

// Add records part at off.
func (p *Parts) Add(off int64, part []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if off < 0 || len(part) == 0 || off > p.limit-int64(len(part)) || p.size > p.limit-int64(len(part)) {
		return errs.New(errs.InvalidArgument, "part [%d, %d) is outside a frame of at most %d bytes", off, off+int64(len(part)), p.limit)
	}
	if _, dup := p.parts[off]; dup {
		return errs.New(errs.InvalidArgument, "part at %d sent twice", off)
	}
	p.parts[off] = part
	p.size += int64(len(part))
	return nil
}

// Size is the bytes collected so far.
func (p *Parts) Size() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// Frame returns header followed by the parts, which must tile the payload
// without gap or overlap.
func (p *Parts) Frame(header []byte) ([]byte, error) { return p.FrameIn(header, nil) }

// FrameIn is Frame built in memory l lends (nil: new memory); the frame is
// then meant for a Put to the store that is l.
func (p *Parts) FrameIn(header []byte, l Lender) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	offs := make([]int64, 0, len(p.parts))
	for o := range p.parts {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	var at int64
	for _, o := range offs {
		if o != at {
			return nil, errs.New(errs.CorruptData, "streamed frame has a gap or overlap at byte %d", at)
		}
		at += int64(len(p.parts[o]))
	}
	size := int(int64(len(header)) + p.size)
	var out []byte
	if l != nil {
		out = l.LendFrame(size) // every byte is written below: not zeroed first
	} else {
		out = make([]byte, size)
	}
	n := copy(out, header)
	for _, o := range offs {
		n += copy(out[n:], p.parts[o])
	}
	p.parts = nil
	return out, nil
}

// bufferedSink streams into any store by assembling the frame first.
type bufferedSink struct {
	ctx   context.Context
	st    Store
	key   string
	parts *Parts
}

// BufferedStream gives any store the StreamWriter interface.
func BufferedStream(ctx context.Context, st Store, key string) PartSink {
	return &bufferedSink{ctx: ctx, st: st, key: key, parts: NewParts(1 << 62)}
}

func (b *bufferedSink) WritePart(off int64, part []byte) error { return b.parts.Add(off, part) }

// BorrowsParts: Commit copies the parts into the frame, Abort drops them.
func (b *bufferedSink) BorrowsParts() bool { return true }

func (b *bufferedSink) Commit(header []byte) error {
	l := b.st.Caps().Lender
	f, err := b.parts.FrameIn(header, l)
	if err != nil {
		return err
	}
	if err = b.st.Put(b.ctx, b.key, f); err != nil && l != nil {
		l.ReturnFrame(f)
	}
	return err
}

func (b *bufferedSink) Abort() { b.parts = NewParts(0) }

// ReadRange serves GetRange from any store.
func ReadRange(ctx context.Context, st Store, key string, off, n int64) ([]byte, int64, error) {
	b, size, release, err := LeaseRange(ctx, st, key, off, n)
	if err == nil && release != nil {
		b = append([]byte(nil), b...) // the lease ends here
		release()
	}
	return b, size, err
}

// LeaseRange is ReadRange in place: a Leaser's frame stays leased until
// release (nil: nothing to release) is called, so its memory is not given
// up for good to one range read (as a Get's is).
func LeaseRange(ctx context.Context, st Store, key string, off, n int64) (b []byte, size int64, release func(), err error) {
	c := st.Caps()
	if c.Ranges != nil {
		b, size, err = c.Ranges.GetRange(ctx, key, off, n)
		return b, size, nil, err
	}
	var f []byte
	if c.Leaser != nil {
		f, release, err = c.Leaser.Lease(ctx, key)
	} else {
		f, err = st.Get(ctx, key)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	size = int64(len(f))
	if off < 0 || n < 0 || off > size {
		if release != nil {
			release()
		}
		return nil, 0, nil, errs.New(errs.InvalidArgument, "range at %d of a %d-byte frame", off, size)
	}
	return f[off:min(size, off+n)], size, release, nil
}

// GetRange and PutStream route a sharded store's streams to the key's node.
func (s *Sharded) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	node, err := s.of(key)
	if err != nil {
		return nil, 0, err
	}
	if l, ok := node.(*lateNode); ok {
		if node, err = l.get(); err != nil {
			return nil, 0, err
		}
	}
	return ReadRange(ctx, node, key, off, n)
}

func (s *Sharded) PutStream(ctx context.Context, key string) (PartSink, error) {
	node, err := s.of(key)
	if err != nil {
		return nil, err
	}
	if l, ok := node.(*lateNode); ok {
		if node, err = l.get(); err != nil {
			return nil, err
		}
	}
	if sw := node.Caps().Stream; sw != nil {
		return sw.PutStream(ctx, key)
	}
	return BufferedStream(ctx, node, key), nil
}
