package core

import (
	"context"
	"math"
	"os"
	"time"

	"github.com/gotensor/gotensor/gotensor/auto"
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Large tensors move in pieces through stores across a link (memory
// nodes): encoding one piece overlaps sending the previous, and decoding
// one overlaps fetching the next.
var (
	StreamMin   int64 = streamMinFromEnv() // tensors (raw bytes) at least this large stream
	StreamPiece int64 = 4 << 20            // bytes per piece
)

// streamMinFromEnv reads GOTENSOR_STREAM_MIN (a size; "off" never streams).
func streamMinFromEnv() int64 {
	v := os.Getenv("GOTENSOR_STREAM_MIN")
	if v == "off" || v == "0" {
		return math.MaxInt64
	}
	if n, err := store.ParseSize(v); err == nil && n > 0 {
		return n
	}
	return 8 << 20
}

// streams says whether a tensor of raw bytes moves in pieces to and from s.
func (s *Store) streams(raw int64) bool {
	return raw >= StreamMin && s.caps.Streams()
}

// writeStreamed encodes raw piece by piece, handing each piece's chunks
// to the store while the next piece is encoded. The time spent waiting on
// the store (parts queued, the commit) is what the link took beyond
// coding. It returns the frame's stored bytes.
func (s *Store) writeStreamed(ctx context.Context, key string, meta tensor.Meta, raw []byte, c codec.Codec, param uint32, start time.Time) (stored int64, err error) {
	w, err := frame.NewWriter(meta, c, param, s.options(ctx, meta), nil)
	if err != nil {
		return 0, err
	}
	defer w.Abort() // after the sink's Commit or Abort (deferred below): the parts it was handed are the writer's scratch
	sink, err := s.caps.Stream.PutStream(ctx, key)
	if err != nil {
		return 0, err
	}
	var at int64
	var encode, move time.Duration
	var sending bool // the first part left: the link's transfer began
	coded := c.ID() != codec.IDNone
	defer func() {
		if err != nil {
			sink.Abort()
			if sending {
				s.auto.End(s.now(), auto.ToStore, -1, coded)
			}
		}
	}()
	if h, n, ok := w.Layout(); ok {
		if err := sink.Announce(h, n); err != nil {
			return 0, err
		}
	}
	write := w.WriteAt
	if sink.BorrowsParts() {
		write = w.WriteAtBorrowed // raw chunks go out from raw itself, which outlives the sink
	}
	cs := w.ChunkSize()
	piece := max(cs, StreamPiece/cs*cs)
	for p := int64(0); p < int64(len(raw)); p += piece {
		if ctx.Err() != nil {
			return 0, ctxErr(ctx)
		}
		t0 := s.now()
		if err := write(raw[p:min(p+piece, int64(len(raw)))], p); err != nil {
			return 0, err
		}
		t1 := s.now()
		encode += t1.Sub(t0)
		for _, b := range adjacent(w.Take()) {
			if !sending {
				s.auto.Begin(s.now())
				sending = true
			}
			if err := sink.WritePart(at, b); err != nil {
				return 0, err
			}
			at += int64(len(b))
		}
		move += s.now().Sub(t1)
	}
	hdr, err := w.HeaderBytes()
	if err != nil {
		return 0, err
	}
	if err := commit(ctx); err != nil {
		return 0, err
	}
	t0 := s.now()
	if err := sink.Commit(hdr); err != nil {
		return 0, err
	}
	end := s.now()
	move += end.Sub(t0)
	stored = at + int64(len(hdr))
	if sending {
		s.auto.End(s.now(), auto.ToStore, stored, coded)
	}
	s.stats.wrote(c.Name(), int64(len(raw)), stored, encode, move, end.Sub(start))
	return stored, nil
}

// fetchStreamed reads the first piece of the frame; the rest is fetched
// piece by piece as it decodes.
func (s *Store) fetchStreamed(ctx context.Context, key string, start time.Time) (*Fetched, error) {
	rr := s.caps.Ranges
	s.auto.Begin(start)
	first, size, err := rr.GetRange(ctx, key, 0, StreamPiece)
	s.moved(int64(len(first)), start, err)
	if err != nil {
		return nil, err
	}
	src := &rangeSource{s: s, rr: rr, key: key, size: size}
	r, err := frame.OpenReader(ctx, src, first, size, StreamPiece, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	src.coded = r.Header.Codec != codec.IDNone // from here on, pieces arrive while earlier ones decode
	s.stats.read(size, 0)
	f := &Fetched{Header: r.Header, r: r, s: s, key: key, size: size, remote: int64(len(first)) < size, fetched: s.now()}
	if rc := s.caps.Recycler; rc != nil { // the first piece is ours alone: its memory serves the next
		f.release = func() { rc.RecycleRange(first) }
	}
	return f, nil
}

// rangeSource serves a frame's ranges from a store, noticing when the
// frame under the key is replaced by one of another size.
type rangeSource struct {
	s     *Store
	rr    store.RangeReader
	key   string
	size  int64
	coded bool // the frame is coded (not none), and being decoded
}

// Recycle gives a decoded range's memory back to the store that lent it.
func (r *rangeSource) Recycle(b []byte) {
	if rc := r.s.caps.Recycler; rc != nil {
		rc.RecycleRange(b)
	}
}

func (r *rangeSource) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	var b []byte
	err := r.fetch(func() (int, int64, error) {
		var size int64
		var err error
		b, size, err = r.rr.GetRange(ctx, r.key, off, n)
		return len(b), size, err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// ReadRangeInto places frame bytes [off, off+len(dst)) in dst where the
// store receives ranges into the caller's memory (see frame.IntoSource).
func (r *rangeSource) ReadRangeInto(ctx context.Context, off int64, dst []byte) (bool, error) {
	ri := r.s.caps.RangesInto
	if ri == nil {
		return false, nil
	}
	return true, r.fetch(func() (int, int64, error) {
		n, size, err := ri.GetRangeInto(ctx, r.key, off, dst)
		if err == nil && n != len(dst) {
			size = -1 // short: the frame changed
		}
		return n, size, err
	})
}

// fetch runs get, one range request, with what every range read records:
// its transfer for the codec choice, its bytes and time in the stats. A
// frame of another size than the one opened is ErrChanged.
func (r *rangeSource) fetch(get func() (n int, size int64, err error)) error {
	start := r.s.now()
	r.s.auto.Begin(start)
	n, size, err := get()
	end := r.s.now()
	r.s.auto.End(end, auto.FromStore, int64(n), r.coded)
	if err != nil {
		return err
	}
	r.s.stats.fetched(int64(n), end.Sub(start))
	if size != r.size {
		return frame.ErrChanged
	}
	return nil
}

// adjacent joins parts that lie back to back in memory (a codec-none
// piece's chunks, which are the tensor's own bytes) into one, so that a
// piece crosses the link as one message rather than one per chunk.
func adjacent(parts [][]byte) [][]byte {
	out := parts[:0]
	for _, b := range parts {
		if n := len(out); n > 0 {
			last := out[n-1]
			if len(b) > 0 && cap(last)-len(last) >= len(b) && &last[:len(last)+1][len(last)] == &b[0] {
				out[n-1] = last[:len(last)+len(b)]
				continue
			}
		}
		out = append(out, b)
	}
	return out
}
