package codec

import (
	"github.com/gotensor/gotensor/gotensor/codec/internal/sample"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// SampleRatio is raw over coded bytes of c on up to n bytes from the
// middle of raw, a tensor's bytes; 1 where c does not shrink them (a
// frame stores such chunks raw): whether coding the tensor with c pays
// in bytes. It is the codecs' own sampler (codec/internal/sample), which
// also decides which byte planes planes and shuffle-deflate code.
func SampleRatio(c Codec, meta tensor.Meta, raw []byte, n int) float64 {
	if c.ID() == IDNone {
		return 1
	}
	return sample.Ratio(sample.Middle(raw, n), func(src []byte) ([]byte, error) {
		enc, _, err := c.Encode(nil, src, Info{Meta: meta})
		return enc, err
	})
}
