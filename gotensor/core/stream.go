package core

import (
	"context"
	"math"
	"os"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/parallel"
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

// writeStreamed encodes raw piece by piece, handing each piece's chunks
// to the store while the next piece is encoded.
// The time spent waiting on the store (parts queued, the commit) is what
// the link took beyond coding.
// It returns the frame's stored bytes.
func (s *Store) writeStreamed(ctx context.Context, sw store.StreamWriter, key string, meta tensor.Meta, raw []byte, c codec.Codec, param uint32, start time.Time) (stored int64, err error) {
	w, err := frame.NewWriter(meta, c, param, s.options(ctx, meta), nil)
	if err != nil {
		return 0, err
	}
	defer w.Abort() // after the sink's Commit or Abort (deferred below): the parts it was handed are the writer's scratch
	sink, err := sw.PutStream(ctx, key)
	if err != nil {
		return 0, err
	}
	var at int64
	var encode, move time.Duration
	var codingCPU uint64  // nanoseconds of CPU the encoding took (see codingCPUOf)
	var sending time.Time // when the first part left: the link's transfer began
	defer func() {
		if err != nil {
			sink.Abort()
			if !sending.IsZero() {
				s.link.end(toStore, -1, sending)
			}
		}
	}()
	write := w.WriteAt
	if b, ok := sink.(store.Borrower); ok && b.BorrowsParts() {
		write = w.WriteAtBorrowed // raw chunks go out from raw itself, which outlives the sink
	}
	cs := w.ChunkSize()
	piece := max(cs, StreamPiece/cs*cs)
	c0, cok := s.cpu(true)
	for p := int64(0); p < int64(len(raw)); p += piece {
		if ctx.Err() != nil {
			return 0, ctxErr(ctx)
		}
		t0 := s.now()
		b0, bok := s.cpu(false) // coding's CPU is the process's alone
		done := s.coding(c.ID())
		err := write(raw[p:min(p+piece, int64(len(raw)))], p)
		done()
		if err != nil {
			return 0, err
		}
		t1 := s.now()
		b1, ok := s.cpu(false)
		encode += t1.Sub(t0)
		codingCPU += codingCPUOf(b0, b1, bok && ok, t1.Sub(t0), parallel.Workers())
		for _, b := range w.Take() {
			if sending.IsZero() {
				sending = s.link.begin()
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
	t0 := s.now()
	if err := sink.Commit(hdr); err != nil {
		return 0, err
	}
	end := s.now()
	move += end.Sub(t0)
	stored = at + int64(len(hdr))
	s.observeWrite(stored, encode, move, codingCPU, sending, c0, cok)
	s.stats.wrote(c.Name(), int64(len(raw)), stored, encode, move, end.Sub(start))
	return stored, nil
}

// observeWrite ends the link transfer of a streamed write of stored bytes
// begun at sending. It is a sample of the link when the link, not coding,
// held the write back (it waited on the link at least as long as it
// coded), and then also of the CPU share moving took since cpu0, less
// coding's (codingCPU nanoseconds). A write that coding held back only
// says the link is at least that fast: it is left out.
func (s *Store) observeWrite(stored int64, encode, move time.Duration, codingCPU uint64, sending time.Time, cpu0 cpuTimes, cpuOK bool) {
	if sending.IsZero() {
		return
	}
	if move < encode {
		s.link.end(toStore, -1, sending)
		return
	}
	s.link.end(toStore, stored, sending)
	if c1, ok := s.cpu(true); ok && cpuOK {
		c1.busy -= min(c1.busy-cpu0.busy, codingCPU)
		if v, ok := cpuShare(cpu0, c1); ok {
			s.link.observeCPU(v * peerShares(s.URL()))
		}
	}
}

// codingCPUOf is the CPU time coding one piece took, from the process's
// CPU times a and b around it (ok: both read) over wall with workers:
// what the process used meanwhile, at most wall times workers. Taking
// wall times workers alone would count the workers busy while they
// waited for cores that moving (ours, or a node's on the same machine)
// held, and the CPU share moving takes would look the smaller the more it
// took. Unread, it is wall times workers.
func codingCPUOf(a, b cpuTimes, ok bool, wall time.Duration, workers int) uint64 {
	most := uint64(max(wall.Nanoseconds(), 0)) * uint64(max(workers, 1))
	if !ok || b.busy < a.busy {
		return most
	}
	return min(b.busy-a.busy, most)
}

// fetchStreamed reads the first piece of the frame; the rest is fetched
// piece by piece as it decodes.
func (s *Store) fetchStreamed(ctx context.Context, rr store.RangeReader, key string) (*Fetched, error) {
	start := s.link.begin()
	first, size, err := rr.GetRange(ctx, key, 0, StreamPiece)
	s.moved(int64(len(first)), start, err)
	if err != nil {
		return nil, err
	}
	r, err := frame.OpenReader(ctx, rangeSource{s: s, rr: rr, key: key, size: size}, first, size, StreamPiece, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	s.stats.read(size, 0)
	f := &Fetched{Header: r.Header, r: r, s: s, key: key, size: size, remote: int64(len(first)) < size}
	if rc, ok := rr.(store.RangeRecycler); ok { // the first piece is ours alone: its memory serves the next
		f.release = func() { rc.RecycleRange(first) }
	}
	return f, nil
}

// rangeSource serves a frame's ranges from a store, noticing when the
// frame under the key is replaced by one of another size.
type rangeSource struct {
	s    *Store
	rr   store.RangeReader
	key  string
	size int64
}

// Recycle gives a decoded range's memory back to the store that lent it.
func (r rangeSource) Recycle(b []byte) {
	if rc, ok := r.rr.(store.RangeRecycler); ok {
		rc.RecycleRange(b)
	}
}

func (r rangeSource) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	start := r.s.link.begin()
	b, size, err := r.rr.GetRange(ctx, r.key, off, n)
	r.s.moved(int64(len(b)), start, err)
	if err != nil {
		return nil, err
	}
	if size != r.size {
		return nil, frame.ErrChanged
	}
	return b, nil
}
