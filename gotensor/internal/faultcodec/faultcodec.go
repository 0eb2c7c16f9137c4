// Package faultcodec registers codecs that panic, for tests that a panic
// deep in the data path comes back as an Internal error and the process
// lives. Import it for its side effect, from tests only.
package faultcodec

import (
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Codec ids far from the real ones (a frame never names them).
const (
	IDPanicEncode codec.ID = 250
	IDPanicDecode codec.ID = 251
)

// Names under which the codecs are registered.
const (
	PanicEncode = "fault-panic-encode" // panics coding every chunk
	PanicDecode = "fault-panic-decode" // codes to half a chunk, panics decoding it
)

func init() {
	codec.Register(faulty{id: IDPanicEncode, name: PanicEncode})
	codec.Register(faulty{id: IDPanicDecode, name: PanicDecode})
}

type faulty struct {
	id   codec.ID
	name string
}

func (f faulty) ID() codec.ID             { return f.id }
func (f faulty) Name() string             { return f.name }
func (faulty) Supports(tensor.DType) bool { return true }
func (f faulty) Lossy() bool              { return true }

func (f faulty) Encode(dst, src []byte, _ codec.Info) ([]byte, uint32, error) {
	if f.id == IDPanicEncode {
		var m map[int]int
		m[len(src)] = 1 // a nil-map write: a runtime panic, not a plain panic(value)
	}
	return append(dst[:0], src[:len(src)/2]...), 0, nil
}

func (f faulty) Decode(dst, src []byte, _ codec.Info, _ uint32) error {
	panic("faultcodec: decode of " + f.name)
}
