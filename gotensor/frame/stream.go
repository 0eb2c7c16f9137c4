package frame

import (
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Encoder builds a frame from parts of a tensor that arrive separately
// (say, staged from a GPU through a small host buffer): each part is coded
// as it comes, so coding overlaps the transfer of the next part. Parts are
// placed by offset and may arrive in any order, concurrently, but each must
// start on a chunk boundary and hold whole chunks (the last may be short).
type Encoder struct {
	h     *Header
	c     codec.Codec
	in    codec.Info
	cs    int64
	opt   Options
	mu    sync.Mutex
	enc   [][]byte // per chunk: encoded bytes, or a copy of the raw chunk
	done  []bool
	nDone int
	taken int // chunks handed out by Take
}

// NewEncoder starts a frame for a tensor of the given meta.
func NewEncoder(meta tensor.Meta, spec string, opt Options) (*Encoder, error) {
	c, param, err := codec.Parse(spec)
	if err != nil {
		return nil, err
	}
	h, in, err := newHeader(meta, c, param, opt)
	if err != nil {
		return nil, err
	}
	n := len(h.Chunks)
	return &Encoder{h: h, c: c, in: in, cs: int64(h.ChunkSize), opt: opt, enc: make([][]byte, n), done: make([]bool, n)}, nil
}

// ChunkSize is the chunk size parts must align to.
func (e *Encoder) ChunkSize() int64 { return e.cs }

// RawSize is the tensor's byte size.
func (e *Encoder) RawSize() int64 { return e.h.RawSize }

// WriteAt codes part, the tensor's bytes starting at off. part is not
// retained.
func (e *Encoder) WriteAt(part []byte, off int64) error {
	end := off + int64(len(part))
	if off < 0 || off%e.cs != 0 || end > e.h.RawSize || (len(part) == 0 && e.h.RawSize > 0) ||
		(end%e.cs != 0 && end != e.h.RawSize) {
		return errs.New(errs.InvalidArgument, "part [%d, %d) is not whole %d-byte chunks of a %d-byte tensor", off, end, e.cs, e.h.RawSize)
	}
	first := int(off / e.cs)
	n := int((int64(len(part)) + e.cs - 1) / e.cs)
	e.mu.Lock()
	for i := first; i < first+n; i++ {
		if e.done[i] {
			e.mu.Unlock()
			return errs.New(errs.InvalidArgument, "chunk %d written twice", i)
		}
		e.done[i] = true // claimed; undone on failure
	}
	e.mu.Unlock()
	err := parallel.ForBytesPinned(n, int64(len(part)), e.opt.Pin, func(j int) error {
		i := first + j
		src := part[int64(j)*e.cs : int64(j)*e.cs+int64(e.h.RawChunkLen(i))]
		var out []byte
		var aux uint32
		if e.c.ID() != codec.IDNone {
			var err error
			if out, aux, err = e.c.Encode(nil, src, e.in); err != nil {
				return err
			}
		}
		if e.c.ID() == codec.IDNone || len(out) >= len(src) {
			out, aux = append([]byte(nil), src...), 0
		}
		e.enc[i] = out
		e.h.Chunks[i] = Chunk{EncLen: uint32(len(out)), CRC: crc32c(out), Aux: aux}
		return nil
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		for i := first; i < first+n; i++ {
			e.done[i], e.enc[i] = false, nil
		}
		return err
	}
	e.nDone += n
	return nil
}

// Finish returns the frame once every chunk has been written.
func (e *Encoder) Finish() ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.nDone != len(e.enc) || e.taken > 0 {
		return nil, errs.New(errs.InvalidArgument, "frame incomplete: %d of %d chunks written, %d taken", e.nDone, len(e.enc), e.taken)
	}
	hs := e.h.Size()
	size := hs
	for _, b := range e.enc {
		size += len(b)
	}
	out := make([]byte, size)
	o := hs
	for i, b := range e.enc {
		o += copy(out[o:], b)
		e.enc[i] = nil
	}
	e.h.put(out[:hs])
	return out, nil
}

// Take returns the encoded chunks that follow the ones already taken, in
// order, as far as they are done: a streamed write sends the payload while
// later chunks are still being coded. Taken chunks are not kept.
func (e *Encoder) Take() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out [][]byte
	for e.taken < len(e.enc) && e.done[e.taken] && e.enc[e.taken] != nil {
		out = append(out, e.enc[e.taken])
		e.enc[e.taken] = nil
		e.taken++
	}
	return out
}

// Header returns the frame header once every chunk has been taken; the
// frame is the header followed by the taken chunks in order.
func (e *Encoder) Header() ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.taken != len(e.enc) {
		return nil, errs.New(errs.InvalidArgument, "frame incomplete: %d of %d chunks taken", e.taken, len(e.enc))
	}
	out := make([]byte, e.h.Size())
	e.h.put(out)
	return out, nil
}

// DecodeChunks decodes chunks first, first+1, ... whose encoded bytes lie
// back to back in src, into dst (their raw bytes); a streamed read decodes
// each piece of a frame as it arrives.
func DecodeChunks(h *Header, first int, src, dst []byte, pin parallel.Pin) error {
	cs := int64(h.ChunkSize)
	if first < 0 || first > len(h.Chunks) || cs == 0 {
		return errs.New(errs.InvalidArgument, "chunk %d of %d", first, len(h.Chunks))
	}
	n := int((int64(len(dst)) + cs - 1) / cs)
	if first+n > len(h.Chunks) || (first+n < len(h.Chunks) && int64(len(dst)) != int64(n)*cs) {
		return errs.New(errs.InvalidArgument, "%d bytes are not whole chunks from chunk %d", len(dst), first)
	}
	offs := make([]int, n+1)
	for j := 0; j < n; j++ {
		offs[j+1] = offs[j] + int(h.Chunks[first+j].EncLen)
	}
	if offs[n] != len(src) {
		return corrupt("chunks %d..%d hold %d encoded bytes, chunk table says %d", first, first+n-1, len(src), offs[n])
	}
	c, err := codec.ByID(h.Codec)
	if err != nil {
		return err
	}
	in := codec.Info{Meta: h.Meta, Param: h.CodecParam}
	return parallel.ForBytesPinned(n, int64(len(dst)), pin, func(j int) error {
		i := first + j
		return decodeChunk(c, in, h.Chunks[i], src[offs[j]:offs[j+1]], dst[int64(j)*cs:int64(j)*cs+int64(h.RawChunkLen(i))], i)
	})
}

// DecodeRange decodes the chunks covering tensor bytes [off, off+len(dst))
// of a parsed frame into dst; off must be on a chunk boundary and the range
// whole chunks (the last may be short). It lets a reader stage a tensor
// through a small buffer.
func DecodeRange(h *Header, frame []byte, off int64, dst []byte, pin parallel.Pin) error {
	if err := h.CheckRange(off, int64(len(dst))); err != nil {
		return err
	}
	cs := int64(h.ChunkSize)
	hs := h.Size()
	if got, want := int64(len(frame)-hs), h.PayloadSize(); got != want {
		return corrupt("frame payload is %d bytes, chunk table says %d", got, want)
	}
	if len(dst) == 0 {
		return nil
	}
	first := int(off / cs)
	n := int((int64(len(dst)) + cs - 1) / cs)
	start := hs
	for i := 0; i < first; i++ {
		start += int(h.Chunks[i].EncLen)
	}
	stop := start
	for i := first; i < first+n; i++ {
		stop += int(h.Chunks[i].EncLen)
	}
	return DecodeChunks(h, first, frame[start:stop], dst, pin)
}

// CheckRange says whether tensor bytes [off, off+n) are whole chunks (the
// last chunk may be short), as ranged decodes require.
func (h *Header) CheckRange(off, n int64) error {
	cs := int64(h.ChunkSize)
	end := off + n
	if off < 0 || n < 0 || (cs > 0 && off%cs != 0) || end > h.RawSize || (end != h.RawSize && cs > 0 && end%cs != 0) {
		return errs.New(errs.InvalidArgument, "range [%d, %d) is not whole %d-byte chunks of a %d-byte tensor", off, end, cs, h.RawSize)
	}
	return nil
}

func decodeChunk(c codec.Codec, in codec.Info, ch Chunk, src, out []byte, i int) error {
	if crc32c(src) != ch.CRC {
		return corrupt("chunk %d checksum mismatch", i)
	}
	if len(src) == len(out) {
		copy(out, src)
		return nil
	}
	err := c.Decode(out, src, in, ch.Aux)
	if err != nil && errs.KindOf(err) == errs.Internal {
		err = errs.Wrap(errs.CorruptData, err, "chunk %d", i)
	}
	return err
}
