// Package size reads byte sizes written by people ("8GiB", "512MB").
package size

import (
	"strconv"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Parse reads sizes like "8GiB", "512MB", "4096".
func Parse(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mul    int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mul = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mul
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v*float64(mul) > 1<<62 {
		return 0, errs.New(errs.InvalidArgument, "bad size %q", s)
	}
	return int64(v * float64(mul)), nil
}
