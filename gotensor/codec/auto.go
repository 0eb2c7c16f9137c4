package codec

import (
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Auto is the spec that lets Resolve pick the codec.
const Auto = "auto"

// Resolve turns a codec spec into a codec and its frame parameter; the
// one place "auto" is read. sample is the tensor's bytes or a part of them,
// nil when they are not known yet (a write staged part by part).
//
// "auto" picks a lossless codec. With a Hint, a tensor smaller than
// CodeMin gets none; with one that knows the link and the codecs' speeds
// (see Hint) it picks the one with the least expected write and read time;
// without, byte planes for floats, LZ4 for other data that a sample shows
// compressible, none otherwise. Whatever it picks, the frame
// never stores a chunk larger than raw, so "auto" never costs more space
// than "none".
func Resolve(spec string, meta tensor.Meta, sample []byte, h *Hint) (Codec, uint32, error) {
	if spec != Auto {
		return Parse(spec)
	}
	if h != nil && sample != nil && len(sample) < CodeMin {
		return none{}, 0, nil
	}
	if h.usable(sample) {
		return h.choose(meta, sample), 0, nil
	}
	if (planes{}).Supports(meta.DType) && (sample == nil || len(sample) >= 256) {
		return planes{}, 0, nil
	}
	if sample != nil && compressible(sample) {
		return lz4Block{}, 0, nil
	}
	return none{}, 0, nil
}

// CodeMin is the least raw bytes "auto" codes when writing to a store: below
// it a tensor moves in about a round trip whatever its codec, and coding
// it (and sampling it to choose) costs more than the bytes it saves.
const CodeMin = 16 << 10

// compressible says whether LZ4 shrinks a 64 KiB sample by 10% or more.
func compressible(raw []byte) bool {
	const sample = 64 << 10
	s := raw
	if len(s) > sample {
		s = s[len(s)/2-sample/2:][:sample] // from the middle: headers and padding skew the ends
	}
	if len(s) < 64 {
		return false
	}
	buf := make([]byte, lz4.CompressBlockBound(len(s)))
	var c lz4.Compressor
	n, err := c.CompressBlock(s, buf)
	return err == nil && n > 0 && n < len(s)*9/10
}
