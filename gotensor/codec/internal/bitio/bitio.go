// Package bitio is the codecs' one bit writer and one bit reader, least
// significant bit first: the order of DEFLATE's streams and of huff0's
// (which planes writes forward and reads back from the end, in its
// decoder's own loops). Writer stores whole 64-bit words and moves on by
// the whole bytes they held, as the packing kernels (planes' and
// shuffle-deflate's, which work on a State) do.
package bitio

import "encoding/binary"

// State is a writer's bit buffer and its place in the buffer: Acc's low
// N bits are not yet stored, Pos is the next byte. The packing kernels
// read and write these fields at these offsets (embedded first in their
// own states).
type State struct {
	Acc uint64
	N   uint64
	Pos int
}

// Store writes Acc's whole bytes at buf[Pos:], which has a word of room,
// keeping the under 8 bits left.
func (s *State) Store(buf []byte) {
	binary.LittleEndian.PutUint64(buf[s.Pos:], s.Acc)
	s.Pos += int(s.N >> 3)
	s.Acc >>= s.N &^ 7
	s.N &= 7
}

// Writer appends a bit stream to Buf[:Pos]. Bits only gathers; Flush
// (which needs a word of room: Grow) moves whole bytes out.
type Writer struct {
	State
	Buf []byte // Buf[:Pos] is written; Buf's length is the room
}

// Bits adds the low k bits of v (the bits held stay at most 64).
func (w *Writer) Bits(v uint64, k uint) {
	w.Acc |= v << w.N
	w.N += uint64(k)
}

// Put adds the low k (at most 32) bits of v and stores the bits held
// once they reach 32, growing the buffer as it needs.
func (w *Writer) Put(v uint32, k uint) {
	w.Bits(uint64(v), k)
	if w.N >= 32 {
		w.Grow(8)
		w.Flush()
	}
}

// Flush stores the whole bytes held (a word of room: Grow).
func (w *Writer) Flush() { w.State.Store(w.Buf) }

// Grow makes room for n more bytes and a word past them beyond Pos,
// keeping Buf[:Pos].
func (w *Writer) Grow(n int) {
	if need := w.Pos + n + 8; need > len(w.Buf) {
		if need <= cap(w.Buf) {
			w.Buf = w.Buf[:cap(w.Buf)]
			return
		}
		b := make([]byte, max(need, 2*cap(w.Buf)))
		copy(b, w.Buf[:w.Pos])
		w.Buf = b
	}
}

// Align pads the bits held with zeros to a whole byte and stores them:
// none are held after it.
func (w *Writer) Align() {
	w.N = (w.N + 7) &^ 7
	w.Grow(8)
	w.Flush()
}

// Append appends p after an Align.
func (w *Writer) Append(p []byte) {
	w.Buf = append(w.Buf[:w.Pos], p...)
	w.Pos = len(w.Buf)
}

// Bytes is the stream written, Buf[:Pos], after an Align.
func (w *Writer) Bytes() []byte { return w.Buf[:w.Pos] }

// Reader reads a bit stream least significant bit first; past the end of
// Src it reads zeros and counts them.
type Reader struct {
	Src  []byte
	Pos  int    // next byte of Src to load
	Bits uint64 // the bits loaded, the next in bit 0
	N    uint   // bits in Bits
	Pad  int    // zero bytes loaded past the end
}

// Refill loads bytes until at least 56 bits (and at most 63) are held.
func (r *Reader) Refill() {
	if r.Pos+8 <= len(r.Src) {
		r.Bits |= binary.LittleEndian.Uint64(r.Src[r.Pos:]) << r.N
		k := (63 - r.N) >> 3
		r.Pos += int(k)
		r.N += 8 * k
		return
	}
	for r.N < 56 {
		if r.Pos < len(r.Src) {
			r.Bits |= uint64(r.Src[r.Pos]) << r.N
			r.Pos++
		} else {
			r.Pad++
		}
		r.N += 8
	}
}

// Take returns the next k (at most 32) bits.
func (r *Reader) Take(k uint) uint64 {
	if r.N < k {
		r.Refill()
	}
	v := r.Bits & (1<<k - 1)
	r.Bits >>= k
	r.N -= k
	return v
}

// Overrun reports whether bits past the end of Src were consumed.
func (r *Reader) Overrun() bool { return int(r.N/8) < r.Pad }

// BytePos is the position in Src of the next whole byte not consumed
// (the bits held include the zero bytes loaded past the end).
func (r *Reader) BytePos() int { return r.Pos + r.Pad - int(r.N/8) }

// Seek drops the bits held and goes on reading at byte p of Src.
func (r *Reader) Seek(p int) { *r = Reader{Src: r.Src, Pos: p} }
