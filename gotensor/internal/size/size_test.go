package size

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "8GiB": 8 << 30, "512MB": 512e6, "1.5K": 1536,
		" 2 mib ": 2 << 20, "1g": 1 << 30, "10B": 10, ".5KiB": 512, "8388607TiB": 8388607 << 40} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// nan parsed as MinInt64, inf and exponents were accepted; all of these
// are InvalidArgument.
func TestParseRejects(t *testing.T) {
	for _, in := range []string{"nan", "NaN", "inf", "+Inf", "-1", "-0", "1e3", "0x10", "", "GiB", "lots", "1 2",
		"1.", "1ZiB", "8388608TiB", "99999999999999999999", "1e400", "+5", "5 bytes"} {
		if n, err := Parse(in); !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("Parse(%q) = %d, %v; want InvalidArgument", in, n, err)
		}
	}
}
