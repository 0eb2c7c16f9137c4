package frame

import (
	"bytes"
	"encoding/binary"

	"github.com/gotensor/gotensor/gotensor/errs"
	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
)

// Head is a frame's parsed header kept across row writes: the header's
// bytes, its parsed form and its chunks' payload offsets, each updated by
// Apply after a patch reached the frame, so that a write of a few chunks
// costs those chunks, not the chunk table (a KV cache has a chunk a row).
type Head struct {
	*Header
	raw []byte  // the encoded header
	enc fenwick // the chunks' encoded lengths
}

// NewHead keeps r's header (its bytes copied).
func NewHead(r *Reader) (*Head, error) {
	n := r.Header.Size()
	if len(r.at) < n {
		return nil, errs.New(errs.Internal, "frame header not at hand")
	}
	return &Head{Header: r.Header, raw: bytes.Clone(r.at[:n]), enc: newFenwick(r.Header.Chunks)}, nil
}

// Bytes is the encoded header; the caller must not modify it.
func (h *Head) Bytes() []byte { return h.raw }

// ChunkOff is where chunk i's payload starts in the frame.
func (h *Head) ChunkOff(i int) int64 { return int64(len(h.raw)) + h.enc.sum(i) }

// FrameSize is the length of the frame.
func (h *Head) FrameSize() int64 { return h.ChunkOff(len(h.Chunks)) }

// Reader reads frame b, which has this header; a frame of another length
// is ErrChanged.
func (h *Head) Reader(b []byte) (*Reader, error) {
	if int64(len(b)) != h.FrameSize() {
		return nil, ErrChanged
	}
	return &Reader{Header: h.Header, at: b, head: h}, nil
}

// OpenReader reads the frame of size bytes with this header from src, a
// piece at a time; a frame of another size is ErrChanged.
func (h *Head) OpenReader(src Source, size, piece int64) (*Reader, error) {
	if size != h.FrameSize() {
		return nil, ErrChanged
	}
	return &Reader{Header: h.Header, at: h.raw, src: src, piece: max(piece, 1), head: h}, nil
}

// NeedsFrame says whether a patch of tensor bytes [off, off+n) reads the
// frame: it covers a chunk only in part.
func (h *Head) NeedsFrame(off, n int64) bool {
	cs := int64(h.ChunkSize)
	end := off + n
	return n > 0 && cs > 0 && (off%cs != 0 || (end%cs != 0 && end != h.RawSize))
}

// Apply updates h for patch p, computed from h, which the frame now has.
func (h *Head) Apply(p *Patch) {
	copy(h.raw[p.TableAt:], p.Table)
	copy(h.raw[len(h.raw)-crcSize:], p.Sum[:])
	for j, c := range p.chunks {
		i := p.First + j
		h.enc.add(i, int64(c.EncLen)-int64(h.Chunks[i].EncLen))
		h.Chunks[i] = c
	}
}

// Header returns the header after p (a new slice), given old, the one it
// was computed from.
func (p *Patch) Header(old []byte) []byte {
	b := bytes.Clone(old)
	copy(b[p.TableAt:], p.Table)
	copy(b[len(b)-crcSize:], p.Sum[:])
	return b
}

// sealPatch sets p's entries and the header checksum they give h's header.
func (h *Head) sealPatch(p *Patch) {
	at := h.chunkTable() + chunkEntry*p.First
	p.TableAt = int64(at)
	p.Table = make([]byte, chunkEntry*len(p.chunks))
	for j, c := range p.chunks {
		putChunk(p.Table[chunkEntry*j:], c)
	}
	n := len(h.raw) - crcSize
	crc := castagnoli.Patch(binary.LittleEndian.Uint32(h.raw[n:]), int64(n), int64(at), h.raw[at:at+len(p.Table)], p.Table)
	binary.LittleEndian.PutUint32(p.Sum[:], crc)
	p.SumAt = int64(n)
}

// fenwick sums a prefix of the chunks' encoded lengths in O(log n) and
// takes a change of one in O(log n).
type fenwick []int64

func newFenwick(chunks []Chunk) fenwick {
	t := make(fenwick, len(chunks)+1)
	for i, c := range chunks {
		t[i+1] += int64(c.EncLen)
		if j := i + 1 + (i+1)&-(i+1); j < len(t) {
			t[j] += t[i+1]
		}
	}
	return t
}

// sum is the total of elements [0, i).
func (t fenwick) sum(i int) int64 {
	var s int64
	for ; i > 0; i -= i & -i {
		s += t[i]
	}
	return s
}

// add adds d to element i.
func (t fenwick) add(i int, d int64) {
	for i++; i < len(t); i += i & -i {
		t[i] += d
	}
}
