package redis

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/valkey-io/valkey-go"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// Streams says whether large frames should move through this store in
// parts (store.Streams): a streamed write sends each piece as soon as it
// is encoded, and a streamed read decodes a range while the next is in
// flight. StreamsDefault sets it for stores opened after.
func (s *Store) Streams() bool { return s.streams }

// StreamsDefault is whether stores opened from now on stream (see Streams).
var StreamsDefault = false

// piecesInFlight bounds a streamed write's pieces on the wire.
const piecesInFlight = 8

// PutStream starts a streamed write: parts are gathered into pieces,
// each sent (pending) once full; Commit writes the manifest, with the
// header in it.
func (s *Store) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx(ctx)
	t := s.topo.Load()
	return &sink{s: s, ctx: ctx, cancel: cancel, key: key, topo: t, next: rand.IntN(len(t.tags)),
		sem: make(chan struct{}, piecesInFlight)}, nil
}

type sink struct {
	s      *Store
	ctx    context.Context
	cancel context.CancelFunc
	key    string
	topo   *topology
	next   int // the shard the next piece goes to
	sem    chan struct{}

	mu     sync.Mutex
	cur    []byte // the piece being gathered
	curOff int64  // its offset in the payload
	segs   []streamSeg
	err    error
	wg     sync.WaitGroup
	ended  bool
}

type streamSeg struct {
	off, n int64
	piece  string
}

// BorrowsParts: WritePart copies each part before it returns.
func (k *sink) BorrowsParts() bool { return true }

func (k *sink) WritePart(off int64, part []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return k.err
	}
	if k.ended {
		return errs.New(errs.InvalidArgument, "write of %q already ended", k.key)
	}
	if off < 0 || len(part) == 0 {
		return errs.New(errs.InvalidArgument, "part at %d of %d bytes", off, len(part))
	}
	if k.cur != nil && off != k.curOff+int64(len(k.cur)) {
		k.flush()
	}
	if k.cur == nil {
		k.cur, k.curOff = make([]byte, 0, max(k.s.opts.Piece, int64(len(part)))), off
	}
	k.cur = append(k.cur, part...)
	if int64(len(k.cur)) >= k.s.opts.Piece {
		k.flush()
	}
	return k.err
}

// flush sends the gathered piece (under k.mu).
func (k *sink) flush() {
	if len(k.cur) == 0 {
		k.cur = nil
		return
	}
	tags := k.topo.tags[k.next%len(k.topo.tags)]
	k.next++
	p := pieceKey(tags[rand.IntN(len(tags))])
	b := k.cur
	k.segs = append(k.segs, streamSeg{off: k.curOff, n: int64(len(b)), piece: p})
	k.cur = nil
	k.mu.Unlock() // waiting for room on the wire: parts of other pieces may come meanwhile
	select {
	case k.sem <- struct{}{}:
	case <-k.ctx.Done():
		k.mu.Lock()
		if k.err == nil {
			k.err = k.s.wrap(k.ctx, k.ctx.Err(), k.key, "writing a piece to")
		}
		return
	}
	k.mu.Lock()
	k.wg.Add(1)
	go func() {
		defer func() { <-k.sem; k.wg.Done() }()
		err := k.s.c.Do(k.ctx, k.s.c.B().Set().Key(p).Value(valkey.BinaryString(b)).PxMilliseconds(k.s.pendingTTL()).Build()).Error()
		if err != nil {
			k.mu.Lock()
			if k.err == nil {
				k.err = k.s.wrap(k.ctx, err, k.key, "writing a piece to")
			}
			k.mu.Unlock()
		}
	}()
}

func (k *sink) pieces() []string {
	out := make([]string, len(k.segs))
	for i, sg := range k.segs {
		out[i] = sg.piece
	}
	return out
}

// Commit writes the manifest (the header, then the pieces in order) once
// every piece is through.
func (k *sink) Commit(header []byte) error {
	k.mu.Lock()
	if k.ended {
		k.mu.Unlock()
		return errs.New(errs.InvalidArgument, "write of %q already ended", k.key)
	}
	k.flush()
	k.ended = true
	k.mu.Unlock()
	k.wg.Wait()
	defer k.cancel()
	k.mu.Lock()
	err := k.err
	segs := append([]streamSeg(nil), k.segs...)
	k.mu.Unlock()
	if err == nil {
		sort.Slice(segs, func(a, b int) bool { return segs[a].off < segs[b].off })
		m := &manifest{ver: newVer(), segs: []segment{{n: int64(len(header)), data: header}}}
		var at int64
		for _, sg := range segs {
			if sg.off != at {
				err = errs.ForKey(errs.CorruptData, k.key, "streamed frame %q has a gap or overlap at byte %d", k.key, at)
				break
			}
			m.segs = append(m.segs, segment{n: sg.n, piece: sg.piece})
			at += sg.n
		}
		m.size = int64(len(header)) + at
		if err == nil {
			if int64(len(header)) == m.size && m.size <= k.s.opts.Piece { // no payload: one value
				return k.s.commit(k.ctx, k.key, inlineValue(m.ver, header), "", nil)
			}
			return k.s.commit(k.ctx, k.key, m.encode(), "", m.pieces())
		}
	}
	k.s.unlink(k.pieces())
	return err
}

// Abort reclaims the pieces sent (they would expire anyway).
func (k *sink) Abort() {
	k.mu.Lock()
	if k.ended {
		k.mu.Unlock()
		return
	}
	k.ended = true
	k.cur = nil
	k.mu.Unlock()
	k.wg.Wait()
	k.cancel()
	k.s.unlink(k.pieces())
}
