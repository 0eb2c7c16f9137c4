package redis

import (
	"context"
	"encoding/binary"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// pendingTTL is the time to live of a piece until the manifest naming it
// commits: an interrupted write's pieces expire after it. It outlasts
// any write (each is bounded by the timeout).
func (s *Store) pendingTTL() int64 { return (2*s.opts.Timeout + time.Minute).Milliseconds() }

// do runs a write on the node that holds its key and, with replicas=N,
// waits until N replicas have it (WAIT, on the same connection, which
// covers this write and every one before it there). An error with the
// reply unset is the write's own; with the reply set, the write was made
// but fewer replicas than asked acknowledged it in time.
func (s *Store) do(ctx context.Context, cmd valkey.Completed, key, what string) (valkey.ValkeyResult, error) {
	if s.opts.Replicas == 0 {
		r := s.c.Do(ctx, cmd)
		return r, s.wrap(ctx, r.Error(), key, what)
	}
	ms := int64(1000)
	if d, ok := ctx.Deadline(); ok {
		ms = max(1, time.Until(d).Milliseconds())
	}
	res := s.c.DoMulti(ctx, cmd, s.c.B().Wait().Numreplicas(int64(s.opts.Replicas)).Timeout(ms).Build())
	if err := res[0].Error(); err != nil {
		return res[0], s.wrap(ctx, err, key, what)
	}
	n, err := res[1].AsInt64()
	if err != nil {
		return res[0], s.wrap(ctx, err, key, what+" (waiting for replicas)")
	}
	if n < int64(s.opts.Replicas) {
		return res[0], &errs.Error{Kind: errs.Unavailable, Key: key, Msg: "key " + quote(key) + ": " + what + " " + s.url +
			": written, but " + strconv.FormatInt(n, 10) + " of replicas=" + strconv.Itoa(s.opts.Replicas) + " replicas acknowledged it in time"}
	}
	return res[0], nil
}

// unreplicated says whether err (from do) is of a write made but not
// acknowledged by enough replicas.
func unreplicated(r valkey.ValkeyResult, err error) bool { return err != nil && r.Error() == nil }

func (s *Store) eval(script string, keys []string, args ...string) valkey.Completed {
	return s.c.B().Eval().Script(script).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// Put stores frame: one value up to a piece, else pieces then a manifest.
func (s *Store) Put(ctx context.Context, key string, frame []byte) error {
	if err := s.check(key); err != nil {
		return err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err := s.put(ctx, key, frame)
	if err != nil {
		s.lent.Forget(frame) // not reused: a failed write may still sit in a connection's queue
	} else {
		s.lent.Back(frame) // written: a lent frame serves the next
	}
	return err
}

func (s *Store) put(ctx context.Context, key string, frame []byte) error {
	if int64(len(frame)) <= s.opts.Piece {
		return s.commit(ctx, key, inlineValue(newVer(), frame), "", nil)
	}
	n := int((int64(len(frame)) + s.opts.Piece - 1) / s.opts.Piece)
	keys := s.topo.Load().placement(n)
	m := &manifest{ver: newVer(), size: int64(len(frame)), segs: make([]segment, n)}
	at := int64(0)
	for i := range n {
		l := (int64(len(frame)) - at) / int64(n-i) // even pieces
		m.segs[i] = segment{n: l, piece: keys[i]}
		at += l
	}
	if err := s.writePieces(ctx, key, m, frame); err != nil {
		return err
	}
	return s.commit(ctx, key, m.encode(), "", m.pieces())
}

// writePieces writes m's pieces from frame, in parallel, each with the
// pending time to live; on failure it reclaims those written.
func (s *Store) writePieces(ctx context.Context, key string, m *manifest, frame []byte) error {
	errl := make([]error, len(m.segs))
	var wg sync.WaitGroup
	at := int64(0)
	for i, sg := range m.segs {
		if sg.piece == "" {
			at += sg.n
			continue
		}
		wg.Add(1)
		go func(i int, b []byte) {
			defer wg.Done()
			errl[i] = s.c.Do(ctx, s.c.B().Set().Key(sg.piece).Value(valkey.BinaryString(b)).PxMilliseconds(s.pendingTTL()).Build()).Error()
		}(i, frame[at:at+sg.n])
		at += sg.n
	}
	wg.Wait()
	for _, err := range errl {
		if err != nil {
			s.unlink(m.pieces())
			return s.wrap(ctx, err, key, "writing a piece to")
		}
	}
	return nil
}

// commit writes value under key if its version is still ver ("": any),
// then makes pieces (the value's, written pending) permanent and
// reclaims the pieces of the manifest it replaced. With replicas=N each
// step waits for N replicas. A refused commit reclaims pieces.
func (s *Store) commit(ctx context.Context, key string, value []byte, ver string, pieces []string) error {
	r, err := s.do(ctx, s.eval(commitScript, []string{valueKey(key)}, valkey.BinaryString(value), ver), key, "committing to")
	if err != nil && !unreplicated(r, err) {
		s.unlink(pieces) // not committed
		return err
	}
	repl := err
	res, _ := r.ToArray()
	if len(res) == 0 {
		return errs.ForKey(errs.Internal, key, "key %q: unexpected commit reply from %s", key, s.url)
	}
	if ok, _ := res[0].AsInt64(); ok == 0 {
		s.unlink(pieces)
		return errChanged
	}
	if len(res) > 1 {
		if b, err := res[1].AsBytes(); err == nil {
			if old, err := decodeManifest(key, b); err == nil {
				defer s.unlinkLater(replaced(old, value))
			}
		}
	}
	if err := s.persist(ctx, key, value[4:envelope], pieces); err != nil {
		return err
	}
	return repl
}

// replaced are old's pieces that value (a manifest, or an inline value)
// does not name: a row edit's new manifest keeps the pieces it did not touch.
func replaced(old *manifest, value []byte) []string {
	keep := map[string]bool{}
	if string(value[:4]) == manMagic {
		if m, err := decodeManifest("", value); err == nil {
			for _, p := range m.pieces() {
				keep[p] = true
			}
		}
	}
	var out []string
	for _, p := range old.pieces() {
		if !keep[p] {
			out = append(out, p)
		}
	}
	return out
}

// errChanged is a commit whose expected version was gone.
var errChanged = errs.New(errs.Unavailable, "changed meanwhile")

// persist makes pending pieces permanent. A piece gone meanwhile is one of
// two things: a later write of the key replaced this one's manifest (ver)
// and reclaimed its pieces, so this write took effect and was superseded,
// as any last-writer-wins store would have it; or an evicting server
// dropped it while the manifest still names it, which fails the write and
// takes back that manifest, and only that one (it would read as
// KeyNotFound anyway).
func (s *Store) persist(ctx context.Context, key string, ver []byte, pieces []string) error {
	if len(pieces) == 0 {
		return nil
	}
	errl := make([]error, len(pieces))
	gone := make([]bool, len(pieces))
	var wg sync.WaitGroup
	for i, p := range pieces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.do(ctx, s.c.B().Persist().Key(p).Build(), key, "committing to")
			errl[i] = err
			if n, e := r.AsInt64(); e == nil && n == 0 { // pending pieces have a TTL: 0 is a piece gone
				gone[i] = true
			}
		}()
	}
	wg.Wait()
	for i := range pieces {
		if gone[i] {
			r, err := s.do(ctx, s.eval(deleteScript, []string{valueKey(key)}, valkey.BinaryString(ver)), key, "committing to")
			s.unlink(pieces)
			if err != nil {
				return err
			}
			if res, _ := r.ToArray(); len(res) > 0 {
				if n, _ := res[0].AsInt64(); n == 0 { // replaced or deleted since: superseded, not evicted
					return nil
				}
			}
			return errs.ForKey(errs.StoreFull, key, "key %q: %s evicted a piece of the tensor while it was being written", key, s.url)
		}
	}
	for _, err := range errl {
		if err != nil {
			return err
		}
	}
	return nil
}

// unlink reclaims pieces, best effort (they are not named by any
// manifest: at worst they stay until evicted).
func (s *Store) unlink(pieces []string) {
	if len(pieces) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	cmds := make(valkey.Commands, 0, len(pieces))
	for _, p := range pieces {
		cmds = append(cmds, s.c.B().Unlink().Key(p).Build())
	}
	s.c.DoMulti(ctx, cmds...)
}

// unlinkLater reclaims pieces no manifest names any more without making
// the caller wait (UNLINK frees them on the server's own time too).
func (s *Store) unlinkLater(pieces []string) {
	if len(pieces) == 0 {
		return
	}
	s.reclaiming.Add(1)
	go func() {
		defer s.reclaiming.Done()
		s.unlink(pieces)
	}()
}

// Get reads key's frame: an inline value, or a manifest and then its
// pieces in parallel. A piece gone while its manifest stays (an evicting
// server dropped it) reads as KeyNotFound, and the manifest is taken back.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	for try := 0; ; try++ {
		v, err := s.c.Do(ctx, s.c.B().Get().Key(valueKey(key)).Build()).AsBytes()
		if err != nil {
			return nil, s.wrap(ctx, err, key, "reading from")
		}
		switch {
		case len(v) >= envelope && string(v[:4]) == inlineMagic:
			return v[envelope:], nil
		case len(v) >= envelope && string(v[:4]) == manMagic:
		default:
			return nil, errs.ForKey(errs.CorruptData, key, "key %q: the value in %s is no gotensor frame", key, s.url)
		}
		m, err := decodeManifest(key, v)
		if err != nil {
			return nil, err
		}
		out := s.readBuffer(int(m.size))[:m.size]
		err = s.readSegments(ctx, key, m, 0, out)
		if err == nil {
			return out, nil
		}
		s.RecycleRange(out) // every piece's reader has returned
		if err != errPieceGone {
			return nil, err
		}
		if again, err := s.lostPiece(ctx, key, m, try); !again {
			return nil, err
		}
	}
}

// errPieceGone is a piece a manifest names that is not there.
var errPieceGone = errs.New(errs.KeyNotFound, "a piece is gone")

// lostPiece decides what a read that found a piece of m gone does: read
// again when key's manifest changed meanwhile (a replace reclaimed the
// piece), else (an evicting server dropped it) take m back and report
// KeyNotFound.
func (s *Store) lostPiece(ctx context.Context, key string, m *manifest, try int) (again bool, err error) {
	h, err := s.c.Do(ctx, s.c.B().Getrange().Key(valueKey(key)).Start(0).End(11).Build()).AsBytes()
	if err != nil {
		return false, s.wrap(ctx, err, key, "reading from")
	}
	if len(h) == envelope && binary.LittleEndian.Uint64(h[4:]) != m.ver && try < 16 {
		return true, nil
	}
	if len(h) == envelope && binary.LittleEndian.Uint64(h[4:]) == m.ver {
		r := s.c.Do(ctx, s.eval(deleteScript, []string{valueKey(key)}, verBytes(m.ver)))
		if res, err := r.ToArray(); err == nil && len(res) > 1 {
			s.unlink(m.pieces())
		}
	}
	return false, errs.ForKey(errs.KeyNotFound, key, "key %q not found in %s (part of it was evicted)", key, s.url)
}

// readSegments reads m's bytes [off, off+len(dst)) into dst, the pieces'
// in parallel.
func (s *Store) readSegments(ctx context.Context, key string, m *manifest, off int64, dst []byte) error {
	end := off + int64(len(dst))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	at := int64(0)
	for _, sg := range m.segs {
		lo, hi := max(at, off), min(at+sg.n, end)
		if lo < hi {
			d := dst[lo-off : hi-off]
			if sg.piece == "" {
				copy(d, sg.data[lo-at:hi-at])
			} else {
				wg.Add(1)
				go func(p string, from int64, d []byte, whole bool) {
					defer wg.Done()
					if err := s.readPiece(ctx, key, p, from, d, whole); err != nil {
						mu.Lock()
						if first == nil || first == errPieceGone {
							first = err
						}
						mu.Unlock()
					}
				}(sg.piece, lo-at, d, lo == at && hi == at+sg.n)
			}
		}
		at += sg.n
	}
	wg.Wait()
	return first
}

// minStreamed is the least part of a piece read over a connection of its
// own (streamPiece): a smaller one costs less as a pipelined reply.
const minStreamed = 64 << 10

// readPiece reads len(d) bytes of piece p from off into d (whole: all of it).
func (s *Store) readPiece(ctx context.Context, key, p string, off int64, d []byte, whole bool) error {
	cmd := func() valkey.Completed {
		if whole {
			return s.c.B().Get().Key(p).Build()
		}
		return s.c.B().Getrange().Key(p).Start(off).End(off + int64(len(d)) - 1).Build()
	}
	if whole || len(d) >= minStreamed {
		if ok, err := s.streamPiece(ctx, cmd(), d); ok {
			return err
		}
	}
	b, err := s.c.Do(ctx, cmd()).AsBytes()
	if valkey.IsValkeyNil(err) || (err == nil && len(b) == 0 && len(d) > 0) {
		return errPieceGone
	}
	if err != nil {
		return s.wrap(ctx, err, key, "reading a piece from")
	}
	if len(b) != len(d) {
		return errs.ForKey(errs.CorruptData, key, "key %q: a piece in %s holds %d bytes where its manifest says %d", key, s.url, len(b), len(d))
	}
	copy(d, b)
	return nil
}

// GetRange reads bytes [off, off+n) of key's frame: of an inline value
// server side, else from the pieces the range covers.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	return s.getRange(ctx, key, off, n, nil)
}

// GetRangeInto reads bytes [off, off+len(dst)) of key's frame into dst:
// a piece the range covers whole arrives there straight from its
// connection, a part of one is copied. Every piece's read has ended
// when it returns, so nothing writes dst afterwards.
func (s *Store) GetRangeInto(ctx context.Context, key string, off int64, dst []byte) (int, int64, error) {
	b, size, err := s.getRange(ctx, key, off, int64(len(dst)), dst)
	return len(b), size, err
}

// getRange reads bytes [off, off+n) of key's frame into dst, or into a
// buffer of the pool where dst is nil.
func (s *Store) getRange(ctx context.Context, key string, off, n int64, dst []byte) ([]byte, int64, error) {
	if err := s.check(key); err != nil {
		return nil, 0, err
	}
	if off < 0 || n < 0 {
		return nil, 0, errs.New(errs.InvalidArgument, "range at %d of %d bytes", off, n)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	for try := 0; ; try++ {
		res, err := s.c.Do(ctx, s.eval(rangeScript, []string{valueKey(key)}, strconv.FormatInt(off, 10), strconv.FormatInt(n, 10))).ToArray()
		if err != nil {
			return nil, 0, s.wrap(ctx, err, key, "reading from")
		}
		kind, _ := res[0].AsInt64()
		switch kind {
		case 0:
			return nil, 0, store.NotFound(key, s.url)
		case 1:
			b, _ := res[1].AsBytes()
			size, _ := res[2].AsInt64()
			if dst != nil {
				b = dst[:copy(dst, b)]
			}
			return b, size, nil // a range past the end is empty: the size tells a reader the frame changed
		case 2:
		default:
			return nil, 0, errs.ForKey(errs.CorruptData, key, "key %q: the value in %s is no gotensor frame", key, s.url)
		}
		v, _ := res[1].AsBytes()
		m, err := decodeManifest(key, v)
		if err != nil {
			return nil, 0, err
		}
		if off >= m.size {
			return []byte{}, m.size, nil
		}
		want := int(min(n, m.size-off))
		var out []byte
		if dst != nil {
			out = dst[:want] // dst holds n >= want bytes
		} else {
			out = s.readBuffer(want)
		}
		err = s.readSegments(ctx, key, m, off, out)
		if err == nil {
			return out, m.size, nil
		}
		if dst == nil {
			s.RecycleRange(out)
		}
		if err != errPieceGone {
			return nil, 0, err
		}
		if again, err := s.lostPiece(ctx, key, m, try); !again {
			return nil, 0, err
		}
	}
}

// Head returns the frame's first n bytes (all if shorter) and its size.
func (s *Store) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	return s.GetRange(ctx, key, 0, int64(n))
}

// Delete removes key and reclaims its pieces.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.check(key); err != nil {
		return err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	r, err := s.do(ctx, s.eval(deleteScript, []string{valueKey(key)}, ""), key, "deleting from")
	if err != nil && !unreplicated(r, err) {
		return err
	}
	repl := err
	res, _ := r.ToArray()
	if len(res) == 0 {
		return errs.ForKey(errs.Internal, key, "key %q: unexpected delete reply from %s", key, s.url)
	}
	if ok, _ := res[0].AsInt64(); ok == 0 {
		return store.NotFound(key, s.url)
	}
	if len(res) > 1 {
		if b, err := res[1].AsBytes(); err == nil {
			if old, err := decodeManifest(key, b); err == nil {
				s.unlink(old.pieces())
			}
		}
	}
	return repl
}

func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	if err := s.check(key); err != nil {
		return false, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	n, err := s.c.Do(ctx, s.c.B().Exists().Key(valueKey(key)).Build()).AsInt64()
	if err != nil {
		return false, s.wrap(ctx, err, key, "reading from")
	}
	return n == 1, nil
}

// masters are the clients of the masters, learnt again (a failover
// moves a shard's master).
func (s *Store) masters(ctx context.Context) (map[string]valkey.Client, error) {
	if !s.cluster {
		return map[string]valkey.Client{s.opts.Hosts[0]: s.c}, nil
	}
	t, err := s.refreshTopology(ctx)
	if err != nil {
		return nil, err
	}
	nodes := s.c.Nodes()
	out := map[string]valkey.Client{}
	for _, m := range t.masters {
		c, ok := nodes[m]
		if !ok {
			return nil, errs.New(errs.Unavailable, "master %s of %s is not connected", m, s.url)
		}
		out[m] = c
	}
	return out, nil
}

// List scans every master for the keys that start with prefix. A key
// there for the whole scan is listed once; one written or deleted during
// it may or may not be.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	ms, err := s.masters(ctx)
	if err != nil {
		return nil, err
	}
	pattern := valuePrefix + globEscape(prefix) + "*"
	var mu sync.Mutex
	seen := map[string]bool{}
	errl := make(chan error, len(ms))
	var wg sync.WaitGroup
	for addr, c := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cursor uint64
			for {
				e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
				if err != nil {
					errl <- s.wrap(ctx, err, "", "listing keys on "+addr+" of")
					return
				}
				mu.Lock()
				for _, k := range e.Elements {
					if strings.HasPrefix(k, valuePrefix) {
						seen[k[len(valuePrefix):]] = true
					}
				}
				mu.Unlock()
				if cursor = e.Cursor; cursor == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errl)
	if err := <-errl; err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// globEscape escapes SCAN MATCH's special characters.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Usage is the gotensor keys held (counted by scanning every master),
// the memory the masters use (INFO used_memory, all their data: pieces,
// manifests and anything else) and their maxmemory summed (0 when any
// master is unbounded). Counting scans every master's keys (core keeps
// a second-old Usage for "auto"). A master that does not answer is named in
// Unanswered, its numbers missing.
func (s *Store) Usage() store.Usage {
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	var u store.Usage
	ms, err := s.masters(ctx)
	if err != nil {
		u.Unanswered = append(u.Unanswered, s.url)
		return u
	}
	unbounded := false
	for addr, c := range ms {
		info, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
		if err != nil {
			u.Unanswered = append(u.Unanswered, addr)
			continue
		}
		used, limit := infoField(info, "used_memory"), infoField(info, "maxmemory")
		u.Bytes += used
		if limit == 0 {
			unbounded = true
		}
		u.Capacity += limit
		var cursor uint64
		for {
			e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(valuePrefix+"*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				u.Unanswered = append(u.Unanswered, addr)
				break
			}
			u.Keys += int64(len(e.Elements))
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	if unbounded {
		u.Capacity = 0
	}
	sort.Strings(u.Unanswered)
	return u
}

func infoField(info, name string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
