package frame

import (
	"runtime"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// scratch holds the slabs coded chunks of whole writes wait in until they
// are laid out in the frame.
var scratch = pool.NewBytes(128<<20, 8*runtime.NumCPU()+8)

// slabBytes is the size of a scratch slab. A whole frame's size is known
// only once its last chunk is coded, so every coded chunk waits in scratch
// until Finish; carved from slabs back to back (each chunk given back the
// room it did not fill) rather than one buffer each, a 44-chunk write
// holds 5 slabs, which the pool's bound per size class keeps for the next
// write, where 44 one-chunk buffers were more than it keeps and half were
// allocated anew every write.
const slabBytes = 8 << 20

// Writer builds one frame; every write path uses it. The tensor's bytes
// arrive whole (Encode) or in parts (WriteAt: staged from a GPU, or
// streamed to a remote store), in any order and concurrently; each part
// starts on a chunk boundary and holds whole chunks (the last may be short).
//
// A Writer made with an Alloc builds the frame in one buffer (Finish); a
// codec-none frame is laid out up front and each chunk is copied into
// place and checksummed while in cache. A Writer without one hands the
// coded chunks out in order as they are ready (Take), then the header;
// Abort then gives its scratch back.
type Writer struct {
	h     *Header
	c     codec.Codec
	in    codec.Info
	cs    int64
	pin   parallel.Pin
	stop  func() error // Options.Stop
	alloc Alloc        // nil: the frame leaves in pieces
	out   []byte       // the whole frame, when its layout is known up front, or its one chunk is coded in place
	whole bool         // a coded frame of one chunk, built whole: the chunk is coded in place in out

	mu       sync.Mutex
	enc      [][]byte // per chunk not in out: its encoded (or raw) bytes
	slabs    [][]byte // scratch the chunks in enc are carved from, to return
	slabUsed int      // bytes of the last slab handed out
	carved   int64    // raw bytes of the chunks rooms were carved for
	state    []uint8
	nReady   int
	taken    int
	active   int  // WriteAt calls in progress
	closed   bool // finished or aborted
}

const (
	chunkEmpty uint8 = iota
	chunkClaimed
	chunkReady
)

// NewWriter starts a frame for a tensor of the given meta, coded by c with
// parameter param (see codec.Parse). With alloc the frame is built whole
// in memory from alloc; with nil it leaves in pieces.
func NewWriter(meta tensor.Meta, c codec.Codec, param uint32, opt Options, alloc Alloc) (*Writer, error) {
	h, in, err := newHeader(meta, c, param, opt)
	if err != nil {
		return nil, err
	}
	n := len(h.Chunks)
	w := &Writer{h: h, c: c, in: in, cs: int64(h.ChunkSize), pin: opt.Pin, stop: opt.Stop, alloc: alloc, state: make([]uint8, n)}
	if alloc != nil && c.ID() == codec.IDNone {
		if pa, ok := alloc.(PayloadAlloc); ok {
			w.out = pa.GetFrame(h.Size(), int(h.RawSize))
		} else {
			w.out = alloc.Get(h.Size() + int(h.RawSize))
		}
	} else {
		w.enc = make([][]byte, n)
		w.whole = alloc != nil && n == 1
	}
	return w, nil
}

// Encode builds the frame for the tensor whose contiguous bytes are raw,
// coded with the codec spec ("planes", "q4:group=64,dim=2"; "auto" is a
// store's choice, see package auto). raw is only read, and not retained.
func Encode(meta tensor.Meta, raw []byte, spec string, opt Options) ([]byte, error) {
	c, param, err := codec.Parse(spec)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(meta, c, param, opt, Heap)
	if err != nil {
		return nil, err
	}
	return w.Encode(raw)
}

// Encode writes the whole tensor and finishes the frame: WriteAt(raw, 0)
// then Finish, except that chunks stored raw are copied once, from raw.
func (w *Writer) Encode(raw []byte) ([]byte, error) {
	if int64(len(raw)) != w.h.RawSize {
		w.Abort()
		return nil, errs.New(errs.InvalidArgument, "%s%v needs %d bytes, buffer has %d", w.h.Meta.DType, w.h.Meta.Shape, w.h.RawSize, len(raw))
	}
	if err := w.writeAt(raw, 0, true); err != nil {
		w.Abort()
		return nil, err
	}
	return w.Finish()
}

// ChunkSize is the chunk size parts must align to.
func (w *Writer) ChunkSize() int64 { return w.cs }

// Layout returns the frame's header and payload lengths where they are
// known before any chunk is written (codec none: every chunk is stored as
// it is), for a streamed write to announce (store.PartSink.Announce).
func (w *Writer) Layout() (header int, payload int64, ok bool) {
	if w.c.ID() != codec.IDNone {
		return 0, 0, false
	}
	return w.h.Size(), w.h.RawSize, true
}

// RawSize is the tensor's byte size.
func (w *Writer) RawSize() int64 { return w.h.RawSize }

// WriteAt codes part, the tensor's bytes starting at off. part is not
// retained.
func (w *Writer) WriteAt(part []byte, off int64) error { return w.writeAt(part, off, false) }

// WriteAtBorrowed is WriteAt for a part that stays valid and unchanged
// until whoever takes the frame's chunks (Take) is done with them: chunks
// stored raw are the part's own bytes, not copies.
func (w *Writer) WriteAtBorrowed(part []byte, off int64) error { return w.writeAt(part, off, true) }

// writeAt codes part; with retain, chunks stored raw may refer to part
// until Finish.
func (w *Writer) writeAt(part []byte, off int64, retain bool) error {
	end := off + int64(len(part))
	if off < 0 || off%w.cs != 0 || end > w.h.RawSize || (len(part) == 0 && w.h.RawSize > 0) ||
		(end%w.cs != 0 && end != w.h.RawSize) {
		return errs.New(errs.InvalidArgument, "part [%d, %d) is not whole %d-byte chunks of a %d-byte tensor", off, end, w.cs, w.h.RawSize)
	}
	first := int(off / w.cs)
	n := int((int64(len(part)) + w.cs - 1) / w.cs)
	if err := w.claim(first, n); err != nil {
		return err
	}
	Work.Encoded.Add(int64(len(part)))
	err := parallel.ForBytesFrom(n, int64(len(part)), codec.SpreadBytes(w.c, w.in), w.pin, func(j int) error {
		i := first + j
		return w.encodeChunk(i, part[int64(j)*w.cs:int64(j)*w.cs+int64(w.h.RawChunkLen(i))], retain)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := first; i < first+n; i++ {
		if err != nil {
			w.state[i] = chunkEmpty
			w.dropChunk(i)
		} else {
			w.state[i] = chunkReady
		}
	}
	if err == nil {
		w.nReady += n
	}
	w.active--
	if w.closed && w.active == 0 {
		w.release()
	}
	return err
}

func (w *Writer) claim(first, n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errs.New(errs.InvalidArgument, "frame already finished or aborted")
	}
	for i := first; i < first+n; i++ {
		if w.state[i] != chunkEmpty {
			for k := first; k < i; k++ {
				w.state[k] = chunkEmpty
			}
			return errs.New(errs.InvalidArgument, "chunk %d written twice", i)
		}
		w.state[i] = chunkClaimed
	}
	w.active++
	return nil
}

// encodeChunk codes chunk i from src. Only the goroutine that claimed the
// chunk touches its entries until it is marked ready under the lock.
func (w *Writer) encodeChunk(i int, src []byte, retain bool) error {
	if w.stop != nil {
		if err := w.stop(); err != nil {
			return err
		}
	}
	if w.out != nil && !w.whole { // codec none, laid out up front
		dst := w.out[w.h.Size()+i*int(w.cs):][:len(src)]
		w.h.Chunks[i] = Chunk{EncLen: uint32(len(src)), CRC: copyCRC(dst, src)}
		return nil
	}
	if w.whole {
		return w.encodeInPlace(src)
	}
	var room []byte // scratch for the chunk, held until the writer is released (Finish, Abort)
	if !retain || w.c.ID() != codec.IDNone {
		room = w.carve(codec.EncodeRoom(w.c, len(src), w.in))
	}
	if w.c.ID() != codec.IDNone {
		out, aux, err := w.c.Encode(room, src, w.in)
		if err != nil {
			w.settle(room, 0)
			return err
		}
		if keepCoded(out, src) {
			w.settle(room, within(out, room))
			w.enc[i] = out
			w.h.Chunks[i] = Chunk{EncLen: uint32(len(out)), CRC: crc32c(out), Aux: aux}
			return nil
		}
	}
	switch { // stored raw
	case retain:
		w.settle(room, 0)
		w.enc[i] = src
		w.h.Chunks[i] = Chunk{EncLen: uint32(len(src)), CRC: crc32c(src)}
	default:
		dst := room[:len(src)]
		w.settle(room, len(src))
		w.enc[i] = dst
		w.h.Chunks[i] = Chunk{EncLen: uint32(len(src)), CRC: copyCRC(dst, src)}
	}
	return nil
}

// encodeInPlace codes the one chunk of a frame built whole straight into
// its place in the frame, after the header (the frame's size is known
// once it is coded: no scratch, and no copy into the frame at Finish). The
// frame keeps the memory of a raw chunk where that is at most half as much
// again as the frame (what a pool's buffer of about the frame's size may
// hold anyway); a chunk coded smaller is copied into a frame of its size.
func (w *Writer) encodeInPlace(src []byte) error {
	hs, n := w.h.Size(), codec.EncodeRoom(w.c, len(src), w.in)
	if cap(w.out) < hs+n { // not already there from a failed try
		w.out = w.alloc.Get(hs + n)
	}
	room := w.out[hs : hs+n : hs+n]
	out, aux, err := w.c.Encode(room, src, w.in)
	if err != nil {
		return err
	}
	if !keepCoded(out, src) { // stored raw
		w.enc[0] = room[:len(src)]
		w.h.Chunks[0] = Chunk{EncLen: uint32(len(src)), CRC: copyCRC(room[:len(src)], src)}
		return nil
	}
	switch {
	case 2*(hs+len(src)) > 3*(hs+len(out)): // the raw chunk's memory is too much to keep
		f := w.alloc.Get(hs + len(out))
		copy(f[hs:], out)
		w.alloc.Put(w.out)
		w.out, out = f, f[hs:hs+len(out)]
	case within(out, room) == 0: // coded elsewhere
		out = room[:copy(room, out)]
	}
	w.enc[0] = out
	w.h.Chunks[0] = Chunk{EncLen: uint32(len(out)), CRC: crc32c(out), Aux: aux}
	return nil
}

// carve returns n bytes of scratch for a chunk of n raw bytes (a coded
// chunk is kept only when smaller): the rest of the last slab, else a new
// one of slabBytes, or of the raw bytes left when fewer (a small tensor
// takes no more than it needs), or of n when more.
func (w *Writer) carve(n int) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.carved += int64(n)
	if k := len(w.slabs); k == 0 || len(w.slabs[k-1])-w.slabUsed < n {
		size := max(n, int(min(slabBytes, w.h.RawSize-w.carved+int64(n))))
		w.slabs, w.slabUsed = append(w.slabs, scratch.Get(size)), 0
	}
	s := w.slabs[len(w.slabs)-1]
	room := s[w.slabUsed : w.slabUsed+n : w.slabUsed+n]
	w.slabUsed += n
	return room
}

// settle gives back the end of room past its first used bytes, when room
// is still the last one carved: chunks coded one after another lie back to
// back.
func (w *Writer) settle(room []byte, used int) {
	if len(room) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.slabs[len(w.slabs)-1]
	if w.slabUsed >= len(room) && &s[w.slabUsed-len(room)] == &room[0] {
		w.slabUsed -= len(room) - used
	}
}

// within is how many bytes of room out fills: len(out) when the codec
// coded into room, else 0.
func within(out, room []byte) int {
	if len(out) > 0 && len(room) > 0 && &out[0] == &room[0] {
		return len(out)
	}
	return 0
}

// keepCoded is the frame's one keep-raw rule: a coded chunk is kept only
// when it is smaller than the raw chunk.
func keepCoded(enc, raw []byte) bool { return len(enc) < len(raw) }

// copyCRC copies src to dst and returns dst's CRC32C, block by block so
// each block is checksummed while it is in cache.
func copyCRC(dst, src []byte) uint32 {
	const block = 64 << 10
	var crc uint32
	for o := 0; o < len(src); o += block {
		e := min(o+block, len(src))
		copy(dst[o:e], src[o:e])
		crc = castagnoli.Update(crc, dst[o:e])
	}
	return crc
}

// dropChunk forgets chunk i's bytes (under the lock).
func (w *Writer) dropChunk(i int) {
	if w.enc != nil {
		w.enc[i] = nil
	}
}

// release returns every buffer the writer holds (under the lock, once
// closed and idle).
func (w *Writer) release() {
	for i := range w.enc {
		w.dropChunk(i)
	}
	for _, s := range w.slabs {
		scratch.Put(s)
	}
	w.slabs, w.slabUsed = nil, 0
	if w.out != nil {
		w.alloc.Put(w.out)
		w.out = nil
	}
}

// Finish returns the frame once every chunk has been written; the buffer
// comes from the writer's Alloc.
func (w *Writer) Finish() ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.alloc == nil {
		return nil, errs.New(errs.InvalidArgument, "a frame written in pieces has no Finish; Take its chunks")
	}
	if w.closed || w.nReady != len(w.state) {
		return nil, errs.New(errs.InvalidArgument, "frame incomplete: %d of %d chunks written", w.nReady, len(w.state))
	}
	w.closed = true
	hs := w.h.Size()
	if w.out != nil {
		out := w.out
		if w.whole {
			out = out[:hs+int(w.h.Chunks[0].EncLen)]
		}
		w.out = nil
		w.release()
		w.h.put(out[:hs])
		return out, nil
	}
	offs := make([]int, len(w.enc)+1)
	offs[0] = hs
	for i, c := range w.h.Chunks {
		offs[i+1] = offs[i] + int(c.EncLen)
	}
	out := w.alloc.Get(offs[len(w.enc)])
	parallel.ForBytesPinned(len(w.enc), int64(len(out)), w.pin, func(i int) error {
		copy(out[offs[i]:offs[i+1]], w.enc[i])
		return nil
	})
	w.release()
	w.h.put(out[:hs])
	return out, nil
}

// Take returns the encoded chunks that follow the ones already taken, in
// order, as far as they are ready: a streamed write sends the payload while
// later chunks are still being coded. Taken chunks are the writer's
// scratch (or, for WriteAtBorrowed, the part's bytes): they stay valid
// until Abort, which gives the scratch back, so whoever they are handed to
// must be done with them first.
func (w *Writer) Take() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.alloc != nil {
		return nil
	}
	var out [][]byte
	for w.taken < len(w.state) && w.state[w.taken] == chunkReady {
		out = append(out, w.enc[w.taken])
		w.enc[w.taken] = nil
		w.taken++
	}
	return out
}

// HeaderBytes returns the frame header once every chunk has been taken;
// the frame is the header followed by the taken chunks in order.
func (w *Writer) HeaderBytes() ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.alloc != nil || w.taken != len(w.state) {
		return nil, errs.New(errs.InvalidArgument, "frame incomplete: %d of %d chunks taken", w.taken, len(w.state))
	}
	w.closed = true
	out := make([]byte, w.h.Size())
	w.h.put(out)
	return out, nil
}

// Abort drops the frame and returns its buffers; WriteAt calls still in
// progress finish first. Idempotent, and a no-op after Finish.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.active == 0 {
		w.release()
	}
}
