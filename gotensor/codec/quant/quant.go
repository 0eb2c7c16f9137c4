// Package quant holds FlexGen's group-wise quantization codecs, "q4" and
// "q8" (lossy). README.md has their format.
package quant

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/half"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// quant is FlexGen's asymmetric group-wise quantization
// (flexgen.compression.TorchCompressedDevice), lossy. Along the group
// dimension the tensor is padded with zeros to whole groups; per group,
// in float32: scale = 15 * (1/(max-min)) and q = round_half_even(
// clamp((x-min)*scale, 0, 15)). q4 packs pairs along the group dimension,
// element 2j in the high nibble and 2j+1 in the low one.
//
// A chunk is whole rows of the dimensions before the group dimension. Its
// encoding is FlexGen's two tensors for those rows, back to back: the
// packed data (uint8, rows x groups*group/2 x inner) and the scales
// (float16, rows x groups x 2 x inner, [...,0,...] = scale, [...,1,...] =
// min). Decoding gives q/scale + min, computed in float32 and rounded to
// the tensor's dtype, as FlexGen's CPU path computes it.
//
// q8 is the same with 8-bit codes, unpacked, and float32 scales (a float16
// scale 255/(max-min) overflows for groups narrower than 0.004).
type quant struct {
	id    codec.ID
	name  string
	bits  int
	scale int // bytes per stored scale or min: 2 (float16) or 4 (float32)
}

func init() {
	codec.Register(quant{codec.IDQ4, "q4", 4, 2})
	codec.Register(quant{codec.IDQ8, "q8", 8, 4})
}

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

func (q quant) ID() codec.ID { return q.id }
func (q quant) Name() string { return q.name }
func (quant) Lossy() bool    { return true }

func (quant) Supports(d tensor.DType) bool {
	return d == tensor.Float16 || d == tensor.BFloat16 || d == tensor.Float32
}

// The parameter packs the group size (low 16 bits) and the group
// dimension (next 8 bits, two's complement so -1 means the last).
const defaultGroup = 64

func (quant) DefaultParam() uint32 { return defaultGroup }

func (q quant) ParseParam(s string) (uint32, error) {
	group, dim := defaultGroup, 0
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return 0, errs.New(errs.InvalidArgument, "codec %s: bad parameter %q (want group=N,dim=D)", q.name, kv)
		case k == "group" && n >= 2 && n <= 1<<15 && n%2 == 0:
			group = n
		case k == "dim" && n >= -tensor.MaxDims && n < tensor.MaxDims:
			dim = n
		default:
			return 0, errs.New(errs.InvalidArgument, "codec %s: bad parameter %q (group: even, 2..32768; dim: a dimension)", q.name, kv)
		}
	}
	return uint32(group) | uint32(uint8(int8(dim)))<<16, nil
}

// geometry is the tensor seen as outer x L x inner around the group dim.
type geometry struct {
	group, outer, length, inner, groups int
	elem                                int
}

func (q quant) geometry(in codec.Info) (geometry, error) {
	group := int(in.Param & 0xFFFF)
	dim := int(int8(in.Param >> 16))
	shape := in.Meta.Shape
	if dim < 0 {
		dim += len(shape)
	}
	if group < 2 || group%2 != 0 {
		return geometry{}, corrupt("%s: group size %d", q.name, group)
	}
	if dim < 0 || dim >= len(shape) {
		return geometry{}, errs.New(errs.InvalidArgument, "%s: group dimension %d out of range for shape %v", q.name, int(int8(in.Param>>16)), shape)
	}
	g := geometry{group: group, outer: 1, inner: 1, length: int(shape[dim]), elem: in.Meta.DType.Size()}
	for _, s := range shape[:dim] {
		g.outer *= int(s)
	}
	for _, s := range shape[dim+1:] {
		g.inner *= int(s)
	}
	g.groups = (g.length + group - 1) / group
	return g, nil
}

func (q quant) ChunkUnit(in codec.Info) (int64, error) {
	g, err := q.geometry(in)
	return int64(g.length) * int64(g.inner) * int64(g.elem), err
}

// encodedRow is the encoding size of one outer row.
func (q quant) encodedRow(g geometry) (data, scales int) {
	return g.groups * g.group * q.bits / 8 * g.inner, g.groups * 2 * g.inner * q.scale
}

// A task quantizes about taskElems elements: whole groups of one row
// (inner == 1) or a tile of columns of one group (inner > 1, the tile
// being read and written a group row at a time, contiguously).
const taskElems = 16 << 10

// tiling splits the work of one chunk of rows into tasks.
type tiling struct {
	g           geometry
	perRow      int // tasks per outer row
	groupsPer   int // inner == 1: groups per task
	width       int // inner > 1: columns per task
	tilesPerGrp int // inner > 1: tasks per group
}

func newTiling(g geometry) tiling {
	t := tiling{g: g}
	if g.inner == 1 {
		t.groupsPer = max(1, taskElems/g.group)
		t.perRow = (g.groups + t.groupsPer - 1) / t.groupsPer
	} else {
		t.width = min(g.inner, max(1, taskElems/g.group))
		t.tilesPerGrp = (g.inner + t.width - 1) / t.width
		t.perRow = g.groups * t.tilesPerGrp
	}
	return t
}

// quantScratch holds one task's values as float32 and per-column state.
type quantScratch struct {
	x           []float32
	mn, sc, sum []float32
	tab         []uint32 // q4 decode: 16 output words per column
	raw         []byte   // q4 decode: 16 output words per group
}

// words returns n bytes of scratch.
func (s *quantScratch) words(n int) []byte {
	if cap(s.raw) < n {
		s.raw = make([]byte, n)
	}
	return s.raw[:n]
}

var quantPool = pool.New(func() *quantScratch { return new(quantScratch) })

func (s *quantScratch) size(elems, cols int) {
	if cap(s.x) < elems {
		s.x = make([]float32, elems)
	}
	if cap(s.mn) < cols {
		s.mn, s.sc, s.sum, s.tab = make([]float32, cols), make([]float32, cols), make([]float32, cols), make([]uint32, 16*cols)
	}
	s.x, s.mn, s.sc, s.sum, s.tab = s.x[:elems], s.mn[:cols], s.sc[:cols], s.sum[:cols], s.tab[:16*cols]
}

func (q quant) Encode(dst, src []byte, in codec.Info) ([]byte, uint32, error) {
	g, err := q.geometry(in)
	if err != nil {
		return nil, 0, err
	}
	rowRaw := g.length * g.inner * g.elem
	if rowRaw == 0 || len(src)%rowRaw != 0 {
		return append(dst[:0], src...), 0, nil // nothing to quantize: stored raw
	}
	rows := len(src) / rowRaw
	dRow, sRow := q.encodedRow(g)
	size := rows * (dRow + sRow)
	if size >= len(src) { // padding makes it larger: the frame stores it raw
		return append(dst[:0], src...), 0, nil
	}
	if cap(dst) < size {
		dst = make([]byte, size)
	}
	out := dst[:size]
	data, scales := out[:rows*dRow], out[rows*dRow:]
	tl := newTiling(g)
	d := in.Meta.DType
	err = parallel.ForBytes(rows*tl.perRow, int64(len(src)), func(t int) error {
		r, k := t/tl.perRow, t%tl.perRow
		row, rdata, rscales := src[r*rowRaw:(r+1)*rowRaw], data[r*dRow:(r+1)*dRow], scales[r*sRow:(r+1)*sRow]
		s := quantPool.Get()
		defer quantPool.Put(s)
		if g.inner == 1 {
			q.encodeGroups(g, d, s, row, k*tl.groupsPer, min((k+1)*tl.groupsPer, g.groups), rdata, rscales)
		} else {
			gi, i0 := k/tl.tilesPerGrp, k%tl.tilesPerGrp*tl.width
			q.encodeTile(g, d, s, row, gi, i0, min(i0+tl.width, g.inner), rdata, rscales)
		}
		return nil
	})
	return out, 0, err
}

// encodeGroups quantizes groups [g0, g1) of a row whose groups are
// contiguous (inner == 1).
func (q quant) encodeGroups(g geometry, d tensor.DType, s *quantScratch, row []byte, g0, g1 int, data, scales []byte) {
	ng := g1 - g0
	s.size(ng*g.group, 2*ng)
	lo, hi := g0*g.group, min(g1*g.group, g.length)
	toF32s(s.x[:hi-lo], row[lo*g.elem:hi*g.elem], d)
	clear(s.x[hi-lo:]) // padding
	levels := float32(int(1)<<q.bits - 1)
	pairs := s.sc[:2*ng] // scale and min of each group
	codes := g.group * q.bits / 8
	data = data[g0*codes : g1*codes]
	for i := 0; i < ng; i++ {
		if i += quantGroupsFast(data[i*codes:], pairs[2*i:], s.x[i*g.group:], g.group, q.bits, levels); i < ng {
			q.encodeGroup(s.x[i*g.group:(i+1)*g.group], data[i*codes:(i+1)*codes], pairs[2*i:], levels)
		}
	}
	if q.scale == 2 {
		fromF32s(scales[g0*4:g1*4], pairs, tensor.Float16)
	} else {
		fromF32s(scales[g0*8:g1*8], pairs, tensor.Float32)
	}
}

// encodeGroup quantizes the group x to out, its scale and min to pair.
func (q quant) encodeGroup(x []float32, out []byte, pair []float32, levels float32) {
	mn, mx := minMax(x)
	scale := levels * (1 / (mx - mn)) // FlexGen: B / (mx - mn) is reciprocal, then multiply
	pair[0], pair[1] = scale, mn
	if q.bits == 8 {
		for j := quantize8Fast(out, x, mn, scale, levels); j < len(x); j++ {
			out[j] = quantize(x[j], mn, scale, levels)
		}
		return
	}
	for p := quantize4Fast(out, x, mn, scale, levels) / 2; p < len(out); p++ {
		out[p] = quantize(x[2*p], mn, scale, levels)<<4 | quantize(x[2*p+1], mn, scale, levels)
	}
}

// encodeTile quantizes columns [i0, i1) of group gi of a row (inner > 1).
func (q quant) encodeTile(g geometry, d tensor.DType, s *quantScratch, row []byte, gi, i0, i1 int, data, scales []byte) {
	w := i1 - i0
	s.size(g.group*w, w)
	for j := 0; j < g.group; j++ {
		x := s.x[j*w : (j+1)*w]
		if jj := gi*g.group + j; jj < g.length {
			toF32s(x, row[(jj*g.inner+i0)*g.elem:(jj*g.inner+i1)*g.elem], d)
		} else {
			clear(x) // padding
		}
	}
	mn, sc, sum := s.mn, s.sc, s.sum
	copy(mn, s.x[:w])
	copy(sc, s.x[:w]) // the maximum, until it becomes the scale
	copy(sum, s.x[:w])
	for j := 1; j < g.group; j++ {
		x := s.x[j*w : (j+1)*w]
		for c := minMaxColsFast(mn, sc, sum, x); c < w; c++ {
			v := x[c]
			if v < mn[c] {
				mn[c] = v
			}
			if v > sc[c] {
				sc[c] = v
			}
			sum[c] += v
		}
	}
	for c := range mn {
		// plain comparisons and vectors are exact where the sum shows no
		// NaN and neither end is a zero; elsewhere the builtins' rules
		if sum[c] != sum[c] || mn[c] == 0 || sc[c] == 0 {
			mn[c], sc[c] = float32(math.Inf(1)), float32(math.Inf(-1))
			for j := 0; j < g.group; j++ {
				mn[c], sc[c] = min(mn[c], s.x[j*w+c]), max(sc[c], s.x[j*w+c])
			}
		}
	}
	levels := float32(int(1)<<q.bits - 1)
	for c := range sc {
		sc[c] = levels * (1 / (sc[c] - mn[c]))
	}
	// the columns' scales are contiguous, and so are their mins
	so, sd := ((gi*2)*g.inner+i0)*q.scale, tensor.Float32
	if q.scale == 2 {
		sd = tensor.Float16
	}
	fromF32s(scales[so:so+w*q.scale], sc, sd)
	fromF32s(scales[so+q.scale*g.inner:][:w*q.scale], mn, sd)
	if q.bits == 8 {
		for j := 0; j < g.group; j++ {
			out, x := data[(gi*g.group+j)*g.inner+i0:][:w], s.x[j*w:(j+1)*w]
			for c := quantizeColsFast(out, x, nil, mn, sc, levels); c < w; c++ {
				out[c] = quantize(x[c], mn[c], sc[c], levels)
			}
		}
		return
	}
	for p := 0; p < g.group/2; p++ {
		out := data[(gi*g.group/2+p)*g.inner+i0:][:w]
		even, odd := s.x[2*p*w:][:w], s.x[(2*p+1)*w:][:w]
		for c := quantizeColsFast(out, even, odd, mn, sc, levels); c < w; c++ {
			out[c] = quantize(even[c], mn[c], sc[c], levels)<<4 | quantize(odd[c], mn[c], sc[c], levels)
		}
	}
}

// minMax is the builtins' min and max of +inf, -inf and x, bit for bit
// (which NaN wins, -0 < +0), computed with plain comparisons where no NaN
// or zero makes that differ.
func minMax(x []float32) (mn, mx float32) {
	// vectors: exact where the sum shows no NaN and neither end is a zero
	if vmn, vmx, sum, ok := minMaxSumFast(x); ok && sum == sum && vmn != 0 && vmx != 0 {
		return vmn, vmx
	}
	mn, mx = x[0], x[0]
	nan := false
	for _, v := range x {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
		if v != v {
			nan = true
		}
	}
	if nan || mn == 0 || mx == 0 {
		mn, mx = float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range x {
			mn, mx = min(mn, v), max(mx, v)
		}
	}
	return mn, mx
}

// quantize is round_half_even(clamp((x-mn)*scale, 0, levels)) in float32;
// NaN (a constant group: 0 * inf) gives 0, as on x86.
func quantize(x, mn, scale, levels float32) uint8 {
	v := (x - mn) * scale
	if !(v > 0) {
		return 0
	}
	if v > levels {
		v = levels
	}
	// adding 1.5 * 2^23 rounds to an integer, half to even, that the low
	// mantissa bits then hold
	return uint8(math.Float32bits(v + 0x1.8p23))
}

func (q quant) Decode(dst, src []byte, in codec.Info, _ uint32) error {
	g, err := q.geometry(in)
	if err != nil {
		return corrupt("%v", err)
	}
	rowRaw := g.length * g.inner * g.elem
	if rowRaw == 0 || len(dst)%rowRaw != 0 {
		return corrupt("%s: chunk of %d bytes is not whole rows of %d", q.name, len(dst), rowRaw)
	}
	rows := len(dst) / rowRaw
	dRow, sRow := q.encodedRow(g)
	if len(src) != rows*(dRow+sRow) {
		return corrupt("%s: chunk holds %d bytes, want %d", q.name, len(src), rows*(dRow+sRow))
	}
	data, scales := src[:rows*dRow], src[rows*dRow:]
	tl := newTiling(g)
	d := in.Meta.DType
	return parallel.ForBytes(rows*tl.perRow, int64(len(dst)), func(t int) error {
		r, k := t/tl.perRow, t%tl.perRow
		row, rdata, rscales := dst[r*rowRaw:(r+1)*rowRaw], data[r*dRow:(r+1)*dRow], scales[r*sRow:(r+1)*sRow]
		s := quantPool.Get()
		defer quantPool.Put(s)
		if g.inner == 1 {
			q.decodeGroups(g, d, s, row, k*tl.groupsPer, min((k+1)*tl.groupsPer, g.groups), rdata, rscales)
		} else {
			gi, i0 := k/tl.tilesPerGrp, k%tl.tilesPerGrp*tl.width
			q.decodeTile(g, d, s, row, gi, i0, min(i0+tl.width, g.inner), rdata, rscales)
		}
		return nil
	})
}

// dequantize is FlexGen's CPU path: q/scale + min in float32, as the bits
// of the tensor's dtype.
func dequantize(qv uint8, scale, mn float32, d tensor.DType) uint32 {
	return fromF32(float32(qv)/scale+mn, d)
}

// decodeGroups is the inverse of encodeGroups.
func (q quant) decodeGroups(g geometry, d tensor.DType, s *quantScratch, row []byte, g0, g1 int, data, scales []byte) {
	if q.bits == 4 {
		q.decodeGroups4(g, d, s, row, g0, g1, data, scales)
		return
	}
	for gi := g0; gi < g1; gi++ {
		scale, mn := q.getScale(scales[gi*2*q.scale:]), q.getScale(scales[(gi*2+1)*q.scale:])
		n := min(g.group, g.length-gi*g.group) // the last group may be padded
		out := row[gi*g.group*g.elem : (gi*g.group+n)*g.elem]
		s.size(n, 0)
		codes := data[gi*g.group:][:n]
		for i := dequantize8Fast(s.x, codes, scale, mn); i < n; i++ {
			s.x[i] = float32(codes[i])/scale + mn
		}
		fromF32s(out, s.x, d)
	}
}

// decodeGroups4 computes the 16 values each group's codes stand for, in
// the tensor's dtype, for all groups [g0, g1) at once, then looks the
// nibbles up in them.
func (q quant) decodeGroups4(g geometry, d tensor.DType, s *quantScratch, row []byte, g0, g1 int, data, scales []byte) {
	ng := g1 - g0
	s.size(16*ng, ng)
	for i := range ng {
		s.sc[i], s.mn[i] = q.getScale(scales[(g0+i)*2*q.scale:]), q.getScale(scales[((g0+i)*2+1)*q.scale:])
	}
	for i := levels4Fast(s.x, s.sc, s.mn); i < ng; i++ {
		for c := range 16 {
			s.x[16*i+c] = float32(c)/s.sc[i] + s.mn[i]
		}
	}
	words := s.words(16 * ng * g.elem)
	fromF32s(words, s.x, d)
	whole := ng
	if g1 == g.groups && g.length%g.group != 0 {
		whole-- // the last group is padded
	}
	gi := g0
	if nibblesGroupsFast(row[g0*g.group*g.elem:], data[g0*g.group/2:], words, whole, g.group/2, g.elem) {
		gi += whole
	}
	var tab [16]uint32
	for ; gi < g1; gi++ {
		w := words[16*(gi-g0)*g.elem:]
		for c := range tab {
			if g.elem == 2 {
				tab[c] = uint32(binary.LittleEndian.Uint16(w[2*c:]))
			} else {
				tab[c] = binary.LittleEndian.Uint32(w[4*c:])
			}
		}
		n := min(g.group, g.length-gi*g.group) // the last group may be padded
		putNibbles(row[gi*g.group*g.elem:(gi*g.group+n)*g.elem], data[gi*g.group/2:][:(n+1)/2], &tab, g.elem)
	}
}

// decodeTile is the inverse of encodeTile. A row of q4 codes is taken out
// of its nibbles first; then both widths decode as q/scale + min per column.
func (q quant) decodeTile(g geometry, d tensor.DType, s *quantScratch, row []byte, gi, i0, i1 int, data, scales []byte) {
	w := i1 - i0
	s.size(w, w)
	for c := 0; c < w; c++ {
		so := ((gi*2)*g.inner + i0 + c) * q.scale
		s.sc[c], s.mn[c] = q.getScale(scales[so:]), q.getScale(scales[so+q.scale*g.inner:])
	}
	codes := s.words(w)
	n := min(g.group, g.length-gi*g.group)
	for j := 0; j < n; j++ {
		jj := gi*g.group + j
		out := row[(jj*g.inner+i0)*g.elem:][:w*g.elem]
		var in []byte
		if q.bits == 8 {
			in = data[jj*g.inner+i0:][:w]
		} else {
			packed := data[(gi*g.group/2+j/2)*g.inner+i0:][:w]
			shift := uint(4 * (1 - j%2)) // element 2p in the high nibble
			for c := nibbleCodesFast(codes, packed, shift); c < w; c++ {
				codes[c] = packed[c] >> shift & 15
			}
			in = codes
		}
		for c := dequantizeColsFast(s.x, in, s.sc, s.mn); c < w; c++ {
			s.x[c] = float32(in[c])/s.sc[c] + s.mn[c]
		}
		fromF32s(out, s.x, d)
	}
}

// putNibbles writes the n = len(out)/elem elements packed two per byte in
// in (high nibble first) through tab.
func putNibbles(out, in []byte, tab *[16]uint32, elem int) {
	n := len(out) / elem
	done := nibblesFast(out, in[:n/2], tab, elem)
	if elem == 2 {
		for p := done; p < n/2; p++ {
			b := in[p]
			binary.LittleEndian.PutUint32(out[4*p:], tab[b>>4]&0xFFFF|tab[b&15]<<16)
		}
	} else {
		for p := done; p < n/2; p++ {
			b := in[p]
			binary.LittleEndian.PutUint64(out[8*p:], uint64(tab[b>>4])|uint64(tab[b&15])<<32)
		}
	}
	if n%2 == 1 {
		putWord(out, n-1, tab[in[n/2]>>4], elem)
	}
}

func putWord(out []byte, i int, w uint32, elem int) {
	if elem == 2 {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(w))
	} else {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
}

func (q quant) putScale(b []byte, x float32) {
	if q.scale == 2 {
		binary.LittleEndian.PutUint16(b, half.F32ToF16(x))
	} else {
		binary.LittleEndian.PutUint32(b, math.Float32bits(x))
	}
}

func (q quant) getScale(b []byte) float32 {
	if q.scale == 2 {
		return half.F16ToF32(binary.LittleEndian.Uint16(b))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// toF32s converts len(dst) elements of dtype d (float16, bfloat16 or
// float32, little endian) to float32.
func toF32s(dst []float32, src []byte, d tensor.DType) {
	switch d {
	case tensor.Float16:
		src = src[:2*len(dst)]
		for i := 0; i < len(dst); {
			i += f16ToF32Fast(dst[i:], src[2*i:])
			for end := min(i+8, len(dst)); i < end; i++ { // a group with a special half, or the tail
				dst[i] = half.F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
			}
		}
	case tensor.BFloat16:
		src = src[:2*len(dst)]
		for i := bf16ToF32Fast(dst, src); i < len(dst); i++ {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
	default:
		src = src[:4*len(dst)]
		if nativeLittleEndian && len(dst) > 0 {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src)
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	}
}

// nativeLittleEndian: float32 slices hold the tensor's bytes as they are.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// fromF32s rounds src to dtype d into dst.
func fromF32s(dst []byte, src []float32, d tensor.DType) {
	switch d {
	case tensor.Float16:
		dst = dst[:2*len(src)]
		for i := 0; i < len(src); {
			i += f32ToF16Fast(dst[2*i:], src[i:])
			for end := min(i+8, len(src)); i < end; i++ { // a group with a special float, or the tail
				binary.LittleEndian.PutUint16(dst[2*i:], half.F32ToF16(src[i]))
			}
		}
	case tensor.BFloat16:
		dst = dst[:2*len(src)]
		for i := f32ToBF16Fast(dst, src); i < len(src); i++ {
			binary.LittleEndian.PutUint16(dst[2*i:], half.F32ToBF16(src[i]))
		}
	default:
		dst = dst[:4*len(src)]
		if nativeLittleEndian && len(src) > 0 {
			copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 4*len(src)))
			return
		}
		for i, x := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	}
}

// fromF32 rounds x to dtype d and returns its bits.
func fromF32(x float32, d tensor.DType) uint32 {
	switch d {
	case tensor.Float16:
		return uint32(half.F32ToF16(x))
	case tensor.BFloat16:
		return uint32(half.F32ToBF16(x))
	}
	return math.Float32bits(x)
}
