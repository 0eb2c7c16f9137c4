package tensor

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestDTypeNamesRoundTrip(t *testing.T) {
	for _, d := range All() {
		got, err := ParseDType(d.String())
		if err != nil || got != d {
			t.Fatalf("%v: %v %v", d, got, err)
		}
		if d.Size() < 1 {
			t.Fatalf("%v has size %d", d, d.Size())
		}
	}
	if _, err := ParseDType("float128"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
}

func TestNumBytes(t *testing.T) {
	n, err := Meta{DType: BFloat16, Shape: []int64{3, 4}}.NumBytes()
	if err != nil || n != 24 {
		t.Fatal(n, err)
	}
	if n, _ := (Meta{DType: Float32, Shape: []int64{}}).NumBytes(); n != 4 {
		t.Fatalf("0-d tensor: %d", n)
	}
	for _, m := range []Meta{
		{DType: Float64, Shape: []int64{1 << 31, 1 << 31, 4}},
		{DType: Float32, Shape: []int64{-1}},
		{DType: Invalid, Shape: []int64{1}},
		{DType: Int8, Shape: make([]int64, MaxDims+1)},
	} {
		if _, err := m.NumBytes(); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%v: %v", m, err)
		}
	}
}

func TestShapeText(t *testing.T) {
	for _, s := range []string{"", "0", "3,4,5"} {
		sh, err := ParseShape(s)
		if err != nil || FormatShape(sh) != s {
			t.Fatalf("%q: %v %v", s, sh, err)
		}
	}
	for _, s := range []string{"a", "1,,2", "-3", "1,2,"} {
		if _, err := ParseShape(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
}
