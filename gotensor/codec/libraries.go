package codec

import (
	"github.com/gotensor/gotensor/gotensor/codec/internal/libdeflate"
	"github.com/gotensor/gotensor/gotensor/codec/internal/libzstd"
)

// Libraries reports which C libraries the codecs were built with (the
// tags libdeflate and libzstd); without one, its pure-Go twin codes.
func Libraries() map[string]bool {
	return map[string]bool{"libdeflate": libdeflate.Built, "libzstd": libzstd.Built}
}
