// Package size reads byte sizes written by people ("8GiB", "512MB").
package size

import (
	"math"
	"math/big"
	"regexp"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// units are the suffixes Parse knows, matched without regard to case:
// K, M, G, T alone are binary, as in most command-line tools.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// syntax is a plain decimal number (no sign, exponent, nan or inf) and a unit.
var syntax = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*([A-Za-z]*)$`)

// Parse reads sizes like "8GiB", "512MB", "1.5G", "4096" strictly (a
// fraction of a byte is dropped): anything but a non-negative decimal
// number with a known unit, and any size past MaxInt64 bytes, is
// InvalidArgument.
func Parse(s string) (int64, error) {
	m := syntax.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, errs.New(errs.InvalidArgument, "bad size %q (want a number and a unit such as 512MiB, 8GB or 4096)", s)
	}
	mul, ok := units[strings.ToLower(m[2])]
	if !ok {
		return 0, errs.New(errs.InvalidArgument, "bad size %q: unknown unit %q (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, m[2])
	}
	v, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return 0, errs.New(errs.InvalidArgument, "bad size %q", s)
	}
	n := new(big.Int).Quo(new(big.Int).Mul(v.Num(), big.NewInt(mul)), v.Denom())
	if !n.IsInt64() {
		return 0, errs.New(errs.InvalidArgument, "size %q exceeds %d bytes", s, int64(math.MaxInt64))
	}
	return n.Int64(), nil
}
