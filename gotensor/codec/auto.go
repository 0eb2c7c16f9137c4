package codec

import (
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Choose picks a lossless codec for a tensor from its dtype and a sample
// of its bytes: byte planes for floats, LZ4 for other data that a sample
// shows compressible, none otherwise. Whatever it picks, the frame never
// stores a chunk larger than raw, so "auto" never costs more than "none".
func Choose(meta tensor.Meta, raw []byte) Codec {
	if (planes{}).Supports(meta.DType) && len(raw) >= 256 {
		return planes{}
	}
	const sample = 64 << 10
	s := raw
	if len(s) > sample {
		s = s[len(s)/2-sample/2:][:sample] // from the middle: headers and padding skew the ends
	}
	if len(s) < 64 {
		return none{}
	}
	buf := make([]byte, lz4.CompressBlockBound(len(s)))
	var c lz4.Compressor
	if n, err := c.CompressBlock(s, buf); err == nil && n > 0 && n < len(s)*9/10 {
		return lz4Block{}
	}
	return none{}
}
