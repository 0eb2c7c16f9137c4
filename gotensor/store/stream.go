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

// RangeIntoReader is a store that can receive part of a frame straight
// into the caller's memory, where a codec-none frame's payload is the
// tensor's own bytes: a read then copies nothing after the link.
type RangeIntoReader interface {
	// GetRangeInto places up to len(dst) bytes of the frame from off in
	// dst; it returns how many and the frame's total size. Nothing writes
	// dst once it has returned.
	GetRangeInto(ctx context.Context, key string, off int64, dst []byte) (n int, size int64, err error)
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
	// Announce gives the frame's header and payload lengths before the
	// first part, where the writer knows them (codec none), so that the
	// store can place each part in the frame as it arrives instead of
	// copying them all at the commit. A sink may ignore it.
	Announce(header int, payload int64) error
}

// Parts assembles a frame from parts: the same checks every store makes
// before a streamed frame becomes visible.
type Parts struct {
	mu    sync.Mutex
	parts map[int64][]byte
	size  int64
	limit int64
	frame []byte // laid out up front (Place): header room, then the payload
	hdr   int    // the header's length in frame
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
	if p.frame != nil { // keep it in the frame: where it landed, or a copy there
		at := p.hdr + int(off)
		slot := p.frame[at : at+len(part) : at+len(part)]
		if &slot[0] != &part[0] {
			copy(slot, part)
		}
		part = slot
	}
	p.parts[off] = part
	p.size += int64(len(part))
	return nil
}

// Place lays the frame out up front in frame: a header of hdr bytes, then
// the payload, of len(frame)-hdr bytes. Parts are then kept in frame (Slot
// gives where one lands; Add copies one that landed elsewhere), and the
// frame is frame itself once the header fills its room.
func (p *Parts) Place(frame []byte, hdr int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frame, p.hdr = frame, hdr
	p.limit = min(p.limit, int64(len(frame)-hdr))
}

// Slot is where the part of n bytes at payload offset off lands in a frame
// laid out up front, or nil (no layout, or the part does not fit in it).
func (p *Parts) Slot(off int64, n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frame == nil || off < 0 || n <= 0 || off > int64(len(p.frame)-p.hdr-n) {
		return nil
	}
	at := p.hdr + int(off)
	return p.frame[at : at+n : at+n]
}

// Placed says whether a frame was laid out up front.
func (p *Parts) Placed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frame != nil
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
	if p.frame != nil { // the parts are in place: the header goes before them
		if len(header) != p.hdr || at != int64(len(p.frame)-p.hdr) {
			return nil, errs.New(errs.CorruptData, "streamed frame of %d+%d bytes announced as %d+%d", len(header), at, p.hdr, len(p.frame)-p.hdr)
		}
		copy(p.frame, header)
		out := p.frame
		p.parts, p.frame = nil, nil
		return out, nil
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

// Announce: the parts are copied once, at the commit, as they would be.
func (b *bufferedSink) Announce(int, int64) error { return nil }

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

// connected is key's node, connected if it was not yet (see lateNode):
// a stream needs the node's own capabilities.
func (s *Sharded) connected(key string) (Store, error) {
	node, err := s.of(key)
	if err != nil {
		return nil, err
	}
	if l, ok := node.(*lateNode); ok {
		return l.get()
	}
	return node, nil
}

// GetRange and PutStream route a sharded store's streams to the key's node.
func (s *Sharded) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	node, err := s.connected(key)
	if err != nil {
		return nil, 0, err
	}
	return ReadRange(ctx, node, key, off, n)
}

// RecycleRange gives back a range (or frame) a sharded store returned, to
// its recycler (see recyclerOf).
func (s *Sharded) RecycleRange(b []byte) {
	if s.rc != nil {
		s.rc.RecycleRange(b)
	}
}

// recyclerOf is the first node's range recycler, or nil unless every node
// reached at open has one. A node reached later is of their scheme, so
// whichever node lent a range, its memory was the caller's alone; a
// recycler is a pool of memory, so the first node's takes any node's range.
func recyclerOf(nodes []Store) RangeRecycler {
	var first RangeRecycler
	for _, n := range nodes {
		if _, late := n.(*lateNode); late {
			continue
		}
		rc := n.Caps().Recycler
		if rc == nil {
			return nil
		}
		if first == nil {
			first = rc
		}
	}
	return first
}

// GetRangeInto reads a range of key's frame from its node into dst: in
// place where the node receives ranges so, else copied there.
func (s *Sharded) GetRangeInto(ctx context.Context, key string, off int64, dst []byte) (int, int64, error) {
	node, err := s.connected(key)
	if err != nil {
		return 0, 0, err
	}
	if ri := node.Caps().RangesInto; ri != nil {
		return ri.GetRangeInto(ctx, key, off, dst)
	}
	b, size, err := ReadRange(ctx, node, key, off, int64(len(dst)))
	if err != nil {
		return 0, 0, err
	}
	return copy(dst, b), size, nil
}

func (s *Sharded) PutStream(ctx context.Context, key string) (PartSink, error) {
	node, err := s.connected(key)
	if err != nil {
		return nil, err
	}
	if sw := node.Caps().Stream; sw != nil {
		return sw.PutStream(ctx, key)
	}
	return BufferedStream(ctx, node, key), nil
}
