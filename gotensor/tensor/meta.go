package tensor

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// MaxDims is the largest rank a tensor may have.
const MaxDims = 32

// Meta is what gotensor records about a tensor besides its bytes.
type Meta struct {
	DType DType
	Shape []int64
}

// Numel is the element count, or an error if it overflows.
func (m Meta) Numel() (int64, error) {
	n := uint64(1)
	for _, s := range m.Shape {
		if s < 0 {
			return 0, errs.New(errs.InvalidArgument, "negative dimension %d in shape %v", s, m.Shape)
		}
		hi, lo := bits.Mul64(n, uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, errs.New(errs.InvalidArgument, "shape %v overflows", m.Shape)
		}
		n = lo
	}
	return int64(n), nil
}

// NumBytes is the size of the tensor's contiguous data.
func (m Meta) NumBytes() (int64, error) {
	if !m.DType.Valid() {
		return 0, errs.New(errs.InvalidArgument, "invalid dtype")
	}
	if len(m.Shape) > MaxDims {
		return 0, errs.New(errs.InvalidArgument, "rank %d exceeds %d", len(m.Shape), MaxDims)
	}
	n, err := m.Numel()
	if err != nil {
		return 0, err
	}
	hi, lo := bits.Mul64(uint64(n), uint64(m.DType.Size()))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, errs.New(errs.InvalidArgument, "shape %v of %s overflows", m.Shape, m.DType)
	}
	return int64(lo), nil
}

// Equal reports whether two metas describe the same dtype and shape.
func (m Meta) Equal(o Meta) bool {
	if m.DType != o.DType || len(m.Shape) != len(o.Shape) {
		return false
	}
	for i := range m.Shape {
		if m.Shape[i] != o.Shape[i] {
			return false
		}
	}
	return true
}

// ParseShape reads a shape written as comma-separated dimensions ("" is a
// 0-d tensor). Python passes shapes this way: it is far cheaper than a list.
func ParseShape(s string) ([]int64, error) {
	if s == "" {
		return []int64{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxDims {
		return nil, errs.New(errs.InvalidArgument, "rank %d exceeds %d", len(parts), MaxDims)
	}
	shape := make([]int64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 {
			return nil, errs.New(errs.InvalidArgument, "bad dimension %q in shape %q", p, s)
		}
		shape[i] = v
	}
	return shape, nil
}

// FormatShape is the inverse of ParseShape.
func FormatShape(shape []int64) string {
	var b strings.Builder
	for i, v := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	return b.String()
}
