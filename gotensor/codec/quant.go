package codec

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
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
	id    ID
	name  string
	bits  int
	scale int // bytes per stored scale or min: 2 (float16) or 4 (float32)
}

func init() {
	Register(quant{IDQ4, "q4", 4, 2})
	Register(quant{IDQ8, "q8", 8, 4})
}

func (q quant) ID() ID       { return q.id }
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

func (q quant) geometry(in Info) (geometry, error) {
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

func (q quant) ChunkUnit(in Info) (int64, error) {
	g, err := q.geometry(in)
	return int64(g.length) * int64(g.inner) * int64(g.elem), err
}

// encodedRow is the encoding size of one outer row.
func (q quant) encodedRow(g geometry) (data, scales int) {
	return g.groups * g.group * q.bits / 8 * g.inner, g.groups * 2 * g.inner * q.scale
}

func (q quant) Encode(dst, src []byte, in Info) ([]byte, uint32, error) {
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
	load := loader(in.Meta.DType)
	// one task per (row, group): groups are independent
	err = parallel.ForBytes(rows*g.groups, int64(len(src)), func(t int) error {
		r, gi := t/g.groups, t%g.groups
		q.encodeGroup(g, load, src[r*rowRaw:(r+1)*rowRaw], gi, data[r*dRow:(r+1)*dRow], scales[r*sRow:(r+1)*sRow])
		return nil
	})
	return out, 0, err
}

func (q quant) encodeGroup(g geometry, load func([]byte, int) float32, row []byte, gi int, data, scales []byte) {
	levels := float32(int(1)<<q.bits - 1)
	for i := 0; i < g.inner; i++ {
		mn, mx := float32(math.Inf(1)), float32(math.Inf(-1))
		for j := gi * g.group; j < (gi+1)*g.group; j++ {
			x := float32(0) // padding
			if j < g.length {
				x = load(row, j*g.inner+i)
			}
			mn, mx = min(mn, x), max(mx, x)
		}
		scale := levels * (1 / (mx - mn)) // FlexGen: B / (mx - mn) is reciprocal, then multiply
		so := ((gi*2)*g.inner + i) * q.scale
		q.putScale(scales[so:], scale)
		q.putScale(scales[so+q.scale*g.inner:], mn)
		for j := 0; j < g.group; j++ {
			x := float32(0)
			if jj := gi*g.group + j; jj < g.length {
				x = load(row, jj*g.inner+i)
			}
			v := (x - mn) * scale
			var qv uint8 // NaN (a constant group: 0 * inf) converts to 0, as on x86
			if v == v {
				qv = uint8(math.RoundToEven(float64(min(max(v, 0), levels))))
			}
			if q.bits == 8 {
				data[(gi*g.group+j)*g.inner+i] = qv
				continue
			}
			p := &data[(gi*g.group/2+j/2)*g.inner+i]
			if j%2 == 0 {
				*p = qv << 4
			} else {
				*p |= qv
			}
		}
	}
}

func (q quant) Decode(dst, src []byte, in Info, _ uint32) error {
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
	store := storer(in.Meta.DType)
	return parallel.ForBytes(rows*g.groups, int64(len(dst)), func(t int) error {
		r, gi := t/g.groups, t%g.groups
		q.decodeGroup(g, store, dst[r*rowRaw:(r+1)*rowRaw], gi, data[r*dRow:(r+1)*dRow], scales[r*sRow:(r+1)*sRow])
		return nil
	})
}

func (q quant) decodeGroup(g geometry, store func([]byte, int, float32), row []byte, gi int, data, scales []byte) {
	for i := 0; i < g.inner; i++ {
		so := ((gi*2)*g.inner + i) * q.scale
		scale, mn := q.getScale(scales[so:]), q.getScale(scales[so+q.scale*g.inner:])
		for j := 0; j < g.group; j++ {
			jj := gi*g.group + j
			if jj >= g.length {
				break
			}
			var qv uint8
			if q.bits == 8 {
				qv = data[jj*g.inner+i]
			} else if b := data[(gi*g.group/2+j/2)*g.inner+i]; j%2 == 0 {
				qv = b >> 4
			} else {
				qv = b & 15
			}
			store(row, jj*g.inner+i, float32(qv)/scale+mn)
		}
	}
}

func (q quant) putScale(b []byte, x float32) {
	if q.scale == 2 {
		binary.LittleEndian.PutUint16(b, f32ToF16(x))
	} else {
		binary.LittleEndian.PutUint32(b, math.Float32bits(x))
	}
}

func (q quant) getScale(b []byte) float32 {
	if q.scale == 2 {
		return f16ToF32(binary.LittleEndian.Uint16(b))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func loader(d tensor.DType) func([]byte, int) float32 {
	switch d {
	case tensor.Float16:
		return func(b []byte, i int) float32 { return f16ToF32(binary.LittleEndian.Uint16(b[2*i:])) }
	case tensor.BFloat16:
		return func(b []byte, i int) float32 {
			return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	}
	return func(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }
}

func storer(d tensor.DType) func([]byte, int, float32) {
	switch d {
	case tensor.Float16:
		return func(b []byte, i int, x float32) { binary.LittleEndian.PutUint16(b[2*i:], f32ToF16(x)) }
	case tensor.BFloat16:
		return func(b []byte, i int, x float32) { binary.LittleEndian.PutUint16(b[2*i:], f32ToBF16(x)) }
	}
	return func(b []byte, i int, x float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x)) }
}
