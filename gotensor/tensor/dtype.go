// Package tensor describes tensors as gotensor moves them: a dtype, a
// shape and a flat, contiguous byte buffer.
package tensor

import "github.com/gotensor/gotensor/gotensor/errs"

// DType is an element type. Its numeric value is stored in frames: never
// renumber an existing dtype.
type DType uint8

const (
	Invalid DType = iota
	Bool
	Uint8
	Int8
	Int16
	Int32
	Int64
	Uint16
	Uint32
	Uint64
	Float16
	BFloat16
	Float32
	Float64
	Complex64
	Complex128
	Float8E4M3FN
	Float8E5M2
	Float8E4M3FNUZ
	Float8E5M2FNUZ
	Float8E8M0FNU
	numDTypes
)

type dtypeInfo struct {
	name string
	size int
	// Floating-point layout, used by codecs that split bytes into planes.
	float    bool
	expBits  int
	mantBits int
	signed   bool
}

var dtypes = [numDTypes]dtypeInfo{
	Bool:           {name: "bool", size: 1},
	Uint8:          {name: "uint8", size: 1},
	Int8:           {name: "int8", size: 1, signed: true},
	Int16:          {name: "int16", size: 2, signed: true},
	Int32:          {name: "int32", size: 4, signed: true},
	Int64:          {name: "int64", size: 8, signed: true},
	Uint16:         {name: "uint16", size: 2},
	Uint32:         {name: "uint32", size: 4},
	Uint64:         {name: "uint64", size: 8},
	Float16:        {name: "float16", size: 2, float: true, expBits: 5, mantBits: 10, signed: true},
	BFloat16:       {name: "bfloat16", size: 2, float: true, expBits: 8, mantBits: 7, signed: true},
	Float32:        {name: "float32", size: 4, float: true, expBits: 8, mantBits: 23, signed: true},
	Float64:        {name: "float64", size: 8, float: true, expBits: 11, mantBits: 52, signed: true},
	Complex64:      {name: "complex64", size: 8},
	Complex128:     {name: "complex128", size: 16},
	Float8E4M3FN:   {name: "float8_e4m3fn", size: 1, float: true, expBits: 4, mantBits: 3, signed: true},
	Float8E5M2:     {name: "float8_e5m2", size: 1, float: true, expBits: 5, mantBits: 2, signed: true},
	Float8E4M3FNUZ: {name: "float8_e4m3fnuz", size: 1, float: true, expBits: 4, mantBits: 3, signed: true},
	Float8E5M2FNUZ: {name: "float8_e5m2fnuz", size: 1, float: true, expBits: 5, mantBits: 2, signed: true},
	Float8E8M0FNU:  {name: "float8_e8m0fnu", size: 1, float: true, expBits: 8, mantBits: 0},
}

var byName = func() map[string]DType {
	m := make(map[string]DType, numDTypes)
	for d := Bool; d < numDTypes; d++ {
		m[dtypes[d].name] = d
	}
	return m
}()

// ParseDType maps a name as torch spells it ("bfloat16", "float8_e4m3fn")
// to a DType.
func ParseDType(name string) (DType, error) {
	if d, ok := byName[name]; ok {
		return d, nil
	}
	return Invalid, errs.New(errs.InvalidArgument, "unknown dtype %q", name)
}

// Valid reports whether d is a known dtype.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

func (d DType) String() string {
	if d.Valid() {
		return dtypes[d].name
	}
	return "invalid"
}

// Size is the size of one element in bytes.
func (d DType) Size() int {
	if d.Valid() {
		return dtypes[d].size
	}
	return 0
}

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && dtypes[d].float }

// ExpBits and MantBits give a float dtype's field widths.
func (d DType) ExpBits() int  { return dtypes[d].expBits }
func (d DType) MantBits() int { return dtypes[d].mantBits }

// HasSign reports whether the element format has a sign bit.
func (d DType) HasSign() bool { return dtypes[d].signed }

// All lists every valid dtype.
func All() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Bool; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}
