package redis

import (
	"context"
	"encoding/binary"
	"sort"
	"strconv"
	"sync"

	"github.com/valkey-io/valkey-go"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// Row edits (store.Editor). A frame's version is its value's ver. An
// inline value is edited by one script, atomically, in place when the
// edit keeps its length. A pieced frame's edit rewrites only the pieces
// it covers, copy on write and server side (each new piece made from the
// old on the old's node, with only the edit's bytes sent), then commits a
// new manifest if the version is still the one edited: a reader sees the
// frame before the edit or after it, never a mix.

// FrameVersion is key's value's version.
func (s *Store) FrameVersion(ctx context.Context, key string) (uint64, error) {
	if err := s.check(key); err != nil {
		return 0, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	h, err := s.c.Do(ctx, s.c.B().Getrange().Key(valueKey(key)).Start(0).End(envelope-1).Build()).AsBytes()
	if err != nil {
		return 0, s.wrap(ctx, err, key, "reading from")
	}
	if len(h) == 0 {
		return 0, store.NotFound(key, s.url)
	}
	if len(h) < envelope || (string(h[:4]) != inlineMagic && string(h[:4]) != manMagic) {
		return 0, errs.ForKey(errs.CorruptData, key, "key %q: the value in %s is no gotensor frame", key, s.url)
	}
	return binary.LittleEndian.Uint64(h[4:]), nil
}

// EditChecked applies e to key's frame if its version is still ver.
func (s *Store) EditChecked(ctx context.Context, key string, ver uint64, e store.Edit) (uint64, bool, error) {
	if err := s.check(key); err != nil {
		return 0, false, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	nv := newVer()
	args := []string{verBytes(ver), verBytes(nv), strconv.FormatInt(e.Off, 10), strconv.FormatInt(e.N, 10), valkey.BinaryString(e.Data)}
	for _, p := range e.Pieces {
		args = append(args, strconv.FormatInt(p.Off, 10), valkey.BinaryString(p.B))
	}
	r, err := s.do(ctx, s.eval(editScript, []string{valueKey(key)}, args...), key, "editing in")
	if err != nil {
		return 0, false, err // unreplicated too: the edit is made, but not as durable as asked
	}
	res, err := r.ToArray()
	if err != nil || len(res) == 0 {
		return 0, false, errs.ForKey(errs.Internal, key, "key %q: unexpected edit reply from %s", key, s.url)
	}
	switch k, _ := res[0].AsInt64(); k {
	case 0:
		return 0, false, nil
	case 1:
		return nv, true, nil
	}
	b, _ := res[1].AsBytes()
	m, err := decodeManifest(key, b)
	if err != nil {
		return 0, false, err
	}
	return s.editPieces(ctx, key, m, nv, e)
}

// op replaces n bytes at off (in a segment) by b.
type op struct {
	off, n int64
	b      []byte
}

// editPieces edits a pieced frame: new pieces for those e covers, then
// the new manifest, if m is still key's.
func (s *Store) editPieces(ctx context.Context, key string, m *manifest, nv uint64, e store.Edit) (uint64, bool, error) {
	if e.Off < 0 || e.N < 0 || e.Off+e.N > m.size {
		return 0, false, errs.New(errs.InvalidArgument, "edit [%d, %d) outside a frame of %d bytes", e.Off, e.Off+e.N, m.size)
	}
	starts := make([]int64, len(m.segs))
	at := int64(0)
	for i, sg := range m.segs {
		starts[i] = at
		at += sg.n
	}
	ops := make([][]op, len(m.segs))
	drop := make([]bool, len(m.segs))
	// same-length writes (the header pieces; the data when it keeps its length) go to each segment they cover
	spread := func(off int64, b []byte) {
		for i, sg := range m.segs {
			lo, hi := max(off, starts[i]), min(off+int64(len(b)), starts[i]+sg.n)
			if lo < hi {
				ops[i] = append(ops[i], op{off: lo - starts[i], n: hi - lo, b: b[lo-off : hi-off]})
			}
		}
	}
	for _, p := range e.Pieces {
		if p.Off < 0 || p.Off+int64(len(p.B)) > e.Off {
			return 0, false, errs.New(errs.InvalidArgument, "edit piece at %d after its data at %d", p.Off, e.Off)
		}
		spread(p.Off, p.B)
	}
	if int64(len(e.Data)) == e.N {
		spread(e.Off, e.Data)
	} else { // the data goes to the segment the range starts in; the rest of the range is cut from those after
		a := sort.Search(len(m.segs), func(i int) bool { return starts[i]+m.segs[i].n > e.Off })
		if a == len(m.segs) { // at the very end: appended to the last segment
			a = len(m.segs) - 1
		}
		end := e.Off + e.N
		ops[a] = append(ops[a], op{off: e.Off - starts[a], n: min(end, starts[a]+m.segs[a].n) - e.Off, b: e.Data})
		for i := a + 1; i < len(m.segs) && starts[i] < end; i++ {
			if cut := min(end, starts[i]+m.segs[i].n) - starts[i]; cut == m.segs[i].n {
				drop[i] = true
			} else {
				ops[i] = append(ops[i], op{off: 0, n: cut})
			}
		}
	}
	nm := &manifest{ver: nv}
	var made []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	var first error
	gone := false
	nm.segs = make([]segment, len(m.segs))
	for i, sg := range m.segs {
		nm.segs[i] = sg
		if drop[i] {
			continue
		}
		if len(ops[i]) == 0 {
			continue
		}
		sort.Slice(ops[i], func(a, b int) bool { return ops[i][a].off > ops[i][b].off })
		nl := sg.n
		for _, o := range ops[i] {
			nl += int64(len(o.b)) - o.n
		}
		if sg.piece == "" { // inline bytes: edited here
			d := append([]byte(nil), sg.data...)
			for _, o := range ops[i] {
				d = append(d[:o.off:o.off], append(append([]byte(nil), o.b...), d[o.off+o.n:]...)...)
			}
			nm.segs[i] = segment{n: int64(len(d)), data: d}
			continue
		}
		if nl == 0 {
			drop[i] = true
			continue
		}
		np := pieceKey(tagOf(sg.piece))
		made = append(made, np)
		nm.segs[i] = segment{n: nl, piece: np}
		args := []string{strconv.FormatInt(s.pendingTTL(), 10)}
		for _, o := range ops[i] {
			args = append(args, strconv.FormatInt(o.off, 10), strconv.FormatInt(o.n, 10), valkey.BinaryString(o.b))
		}
		wg.Add(1)
		go func(from, to string, want int64) {
			defer wg.Done()
			n, err := s.c.Do(ctx, s.eval(deriveScript, []string{from, to}, args...)).AsInt64()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				if first == nil {
					first = s.wrap(ctx, err, key, "editing in")
				}
			case n < 0:
				gone = true
			case n != want:
				if first == nil {
					first = errs.ForKey(errs.CorruptData, key, "key %q: an edited piece in %s holds %d bytes, not %d", key, s.url, n, want)
				}
			}
		}(sg.piece, np, nl)
	}
	wg.Wait()
	if first != nil || gone {
		s.unlink(made)
		return 0, false, first // gone: the frame changed (a replace reclaimed the piece) or was evicted; the caller reads it again
	}
	segs := nm.segs[:0]
	for i, sg := range nm.segs {
		if !drop[i] {
			segs = append(segs, sg)
			nm.size += sg.n
		}
	}
	nm.segs = segs
	if err := s.commit(ctx, key, nm.encode(), verBytes(m.ver), made); err != nil {
		if err == errChanged {
			return 0, false, nil
		}
		return 0, false, err
	}
	return nv, true, nil
}
