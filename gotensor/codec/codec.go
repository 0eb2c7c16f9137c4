// Package codec holds the chunk codecs. A codec turns one chunk of raw
// tensor bytes into an encoded chunk and back; framing, checksums and
// parallelism live in package frame.
package codec

import (
	"sort"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// ID identifies a codec inside a frame. Never renumber an existing codec.
type ID uint8

const (
	IDNone ID = 0
)

// Codec encodes and decodes independent chunks. Implementations must be
// safe for concurrent use.
type Codec interface {
	ID() ID
	Name() string
	// Supports reports whether the codec can encode tensors of dtype d.
	Supports(d tensor.DType) bool
	// Encode appends the encoding of src to dst[:0] and returns it. The
	// frame stores the chunk raw instead when the result is not smaller.
	Encode(dst, src []byte, d tensor.DType) ([]byte, error)
	// Decode fills all of dst from src, or returns a CorruptData error.
	Decode(dst, src []byte, d tensor.DType) error
}

var (
	byID   = map[ID]Codec{}
	byName = map[string]Codec{}
)

// Register adds a codec; it panics on a duplicate id or name (a
// programming error caught at init).
func Register(c Codec) {
	if _, dup := byID[c.ID()]; dup {
		panic("codec: duplicate id " + c.Name())
	}
	if _, dup := byName[c.Name()]; dup {
		panic("codec: duplicate name " + c.Name())
	}
	byID[c.ID()] = c
	byName[c.Name()] = c
}

// ByName finds a codec by the name users pass as codec=.
func ByName(name string) (Codec, error) {
	if c, ok := byName[name]; ok {
		return c, nil
	}
	return nil, errs.New(errs.InvalidArgument, "unknown codec %q (known: %v)", name, Names())
}

// ByID finds the codec a frame names.
func ByID(id ID) (Codec, error) {
	if c, ok := byID[id]; ok {
		return c, nil
	}
	return nil, errs.New(errs.CorruptData, "frame names unknown codec id %d", id)
}

// Names lists the registered codecs, sorted.
func Names() []string {
	out := make([]string, 0, len(byName))
	for n := range byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func init() { Register(none{}) }

// none stores chunks as they are.
type none struct{}

func (none) ID() ID                     { return IDNone }
func (none) Name() string               { return "none" }
func (none) Supports(tensor.DType) bool { return true }
func (none) Encode(dst, src []byte, _ tensor.DType) ([]byte, error) {
	return append(dst[:0], src...), nil
}
func (none) Decode(dst, src []byte, _ tensor.DType) error {
	if len(src) != len(dst) {
		return errs.New(errs.CorruptData, "stored chunk holds %d bytes, want %d", len(src), len(dst))
	}
	copy(dst, src)
	return nil
}
