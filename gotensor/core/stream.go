package core

import (
	"context"
	"math"
	"os"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
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

const piecesInFlight = 4

// writeStreamed encodes raw piece by piece, handing each piece's chunks
// to the store while the next piece is encoded.
func (s *Store) writeStreamed(ctx context.Context, sw store.StreamWriter, key string, meta tensor.Meta, raw []byte, spec string) error {
	if spec == "auto" {
		spec = codec.Choose(meta, raw).Name()
	}
	opt := s.Frame
	opt.Pin = pinOf(ctx)
	e, err := frame.NewEncoder(meta, spec, opt)
	if err != nil {
		return err
	}
	sink, err := sw.PutStream(ctx, key)
	if err != nil {
		return err
	}
	cs := e.ChunkSize()
	piece := max(cs, StreamPiece/cs*cs)
	var at int64
	for p := int64(0); p < int64(len(raw)); p += piece {
		end := min(p+piece, int64(len(raw)))
		if err := e.WriteAt(raw[p:end], p); err != nil {
			sink.Abort()
			return err
		}
		for _, b := range e.Take() {
			if err := sink.WritePart(at, b); err != nil {
				sink.Abort()
				return err
			}
			at += int64(len(b))
		}
	}
	hdr, err := e.Header()
	if err != nil {
		sink.Abort()
		return err
	}
	return sink.Commit(hdr)
}

// streamSrc is a frame still in the store: its first piece and header are here.
type streamSrc struct {
	s     *Store
	rr    store.RangeReader
	key   string
	size  int64
	first []byte
}

// fetchStreamed reads the first piece of the frame; a frame that fits in
// it is complete, a larger one is decoded piece by piece later.
func (s *Store) fetchStreamed(ctx context.Context, rr store.RangeReader, key string) (*Fetched, error) {
	first, size, err := rr.GetRange(ctx, key, 0, StreamPiece)
	if err != nil {
		return nil, err
	}
	if int64(len(first)) == size {
		h, err := frame.ParseHeader(first, s.Limits)
		if err != nil {
			return nil, wrapKey(err, key)
		}
		return &Fetched{Header: h, frame: first, pin: pinOf(ctx)}, nil
	}
	n, err := frame.HeaderLen(first)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	if int64(n) > size {
		return nil, wrapKey(errs.New(errs.CorruptData, "frame of %d bytes has a %d-byte header", size, n), key)
	}
	if n > len(first) { // a header longer than a piece: many chunks
		if first, _, err = rr.GetRange(ctx, key, 0, int64(n)); err != nil {
			return nil, err
		}
	}
	h, err := frame.ParseHeader(first, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	if int64(h.Size())+h.PayloadSize() != size {
		return nil, wrapKey(errs.New(errs.CorruptData, "frame is %d bytes, its header describes %d", size, int64(h.Size())+h.PayloadSize()), key)
	}
	return &Fetched{Header: h, pin: pinOf(ctx), src: &streamSrc{s: s, rr: rr, key: key, size: size, first: first}}, nil
}

type span struct {
	chunk     int   // first chunk
	enc, n    int64 // encoded bytes [enc, enc+n) of the frame
	raw, rawN int64 // raw bytes [raw, raw+rawN) relative to the decode range
}

// decode fetches and decodes tensor bytes [off, off+len(dst)) piece by
// piece. If the frame changes under it (another writer replaced it), it
// decodes the whole current frame once instead.
func (f *Fetched) decodeStreamed(off int64, dst []byte, pin parallel.Pin) error {
	h, src := f.Header, f.src
	if err := h.CheckRange(off, int64(len(dst))); err != nil {
		return err
	}
	cs := int64(h.ChunkSize)
	end := off + int64(len(dst))
	if len(dst) == 0 {
		return nil
	}
	first := int(off / cs)
	last := int((end + cs - 1) / cs)
	enc := int64(h.Size())
	for i := 0; i < first; i++ {
		enc += int64(h.Chunks[i].EncLen)
	}
	var spans []span
	for i := first; i < last; {
		sp := span{chunk: i, enc: enc, raw: int64(i-first) * cs}
		for i < last && (sp.n == 0 || sp.n+int64(h.Chunks[i].EncLen) <= StreamPiece) {
			sp.n += int64(h.Chunks[i].EncLen)
			sp.rawN += int64(h.RawChunkLen(i))
			i++
		}
		enc += sp.n
		spans = append(spans, sp)
	}
	ctx := context.Background()
	sem := make(chan struct{}, piecesInFlight)
	errc := make(chan error, len(spans))
	var wg sync.WaitGroup
	for _, sp := range spans {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var b []byte
			if sp.enc+sp.n <= int64(len(src.first)) {
				b = src.first[sp.enc : sp.enc+sp.n]
			} else {
				got, size, err := src.rr.GetRange(ctx, src.key, sp.enc, sp.n)
				if err != nil {
					errc <- err
					return
				}
				if size != src.size || int64(len(got)) != sp.n {
					errc <- errChanged
					return
				}
				b = got
			}
			errc <- frame.DecodeChunks(h, sp.chunk, b, dst[sp.raw:sp.raw+sp.rawN], pin)
		}()
	}
	wg.Wait()
	close(errc)
	var firstErr error
	for err := range errc {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == errChanged || errs.Is(firstErr, errs.CorruptData) {
		return f.decodeWhole(off, dst, pin)
	}
	return wrapKey(firstErr, src.key)
}

var errChanged = errs.New(errs.CorruptData, "frame changed while it was read")

// decodeWhole reads the whole current frame and decodes from it.
func (f *Fetched) decodeWhole(off int64, dst []byte, pin parallel.Pin) error {
	src := f.src
	b, err := src.s.st.Get(context.Background(), src.key)
	if err != nil {
		return err
	}
	h, err := frame.ParseHeader(b, src.s.Limits)
	if err != nil {
		return wrapKey(err, src.key)
	}
	if !h.Meta.Equal(f.Header.Meta) {
		return errs.New(errs.InvalidArgument, "key %q was replaced by a %s%v tensor while it was read", src.key, h.Meta.DType, h.Meta.Shape)
	}
	return wrapKey(frame.DecodeRange(h, b, off, dst, pin), src.key)
}
