// Package codec is what the chunk codecs share: the Codec interface, the
// codec IDs a frame names, the registry, the parsing of codec names and
// specs, and SampleRatio, whether coding a tensor pays. A codec turns one
// chunk of raw tensor bytes into an encoded chunk and back; framing,
// checksums and parallelism live in package frame. The codecs live in
// their family packages (planes, deflate, quant, lz), which register
// themselves: importing gotensor/codec/all makes them all available.
// docs/CODECS.md tells them apart.
package codec

import (
	"github.com/gotensor/gotensor/gotensor/parallel"
	"sort"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// ID identifies a codec inside a frame. Never renumber an existing codec.
type ID uint8

const (
	IDNone           ID = 0
	IDPlanes         ID = 1
	IDDeflate        ID = 2
	IDShuffleDeflate ID = 3
	IDLZ4            ID = 4
	IDZstd           ID = 5
	IDQ4             ID = 6
	IDQ8             ID = 7
	IDShuffleZstd    ID = 8

	idMax = IDShuffleZstd // the highest codec id
)

// Info is what a codec knows about the chunk it codes.
type Info struct {
	Meta  tensor.Meta // the whole tensor
	Param uint32      // codec parameter stored in the frame header
}

// Codec encodes and decodes independent chunks. Implementations must be
// safe for concurrent use.
type Codec interface {
	ID() ID
	Name() string
	// Supports reports whether the codec can encode tensors of dtype d.
	Supports(d tensor.DType) bool
	// Encode appends the encoding of src to dst[:0] and returns it with a
	// codec-defined checksum (0 if none) for the chunk table. The frame
	// stores the chunk raw instead when the result is not smaller.
	Encode(dst, src []byte, in Info) (out []byte, aux uint32, err error)
	// Decode fills all of dst from src, verifying aux if the codec uses
	// one; malformed input gives a CorruptData error.
	Decode(dst, src []byte, in Info, aux uint32) error
}

// Bounded codecs say how large a dst Encode needs to code into it rather
// than into new memory.
type Bounded interface {
	// EncodeBound is the least capacity of dst that Encode of n raw bytes
	// uses as it is.
	EncodeBound(n int, in Info) int
}

// EncodeRoom is the room to give Encode of n raw bytes: its bound, when
// the codec has one, else n (a coded chunk is kept only when smaller).
func EncodeRoom(c Codec, n int, in Info) int {
	if b, ok := c.(Bounded); ok {
		return max(n, b.EncodeBound(n, in))
	}
	return n
}

// Lossy codecs decode to an approximation of the input.
type Lossy interface{ Lossy() bool }

// Parametric codecs take parameters in their spec ("q4:group=64,dim=2").
type Parametric interface {
	// DefaultParam is the parameter of the bare name.
	DefaultParam() uint32
	ParseParam(s string) (uint32, error)
}

// Chunked codecs need chunks to be a multiple of a unit (in bytes).
type Chunked interface {
	ChunkUnit(in Info) (int64, error)
}

// Spread codecs code far below memory speed: a tensor of SpreadBytes or
// more is worth coding on several workers, in chunks of at least half of
// it (parallel.MinParallelBytes and 64 KiB chunks for other codecs).
type Spread interface {
	SpreadBytes(in Info) int64
}

// SpreadBytes is the least tensor size worth coding with c on several
// workers.
func SpreadBytes(c Codec, in Info) int64 {
	if s, ok := c.(Spread); ok {
		return s.SpreadBytes(in)
	}
	return parallel.MinParallelBytes
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
	return nil, errs.New(errs.InvalidArgument, "unknown codec %q (known: %s, and auto where a write chooses)", name, strings.Join(Names(), ", "))
}

// Parse reads a codec spec, "name" or "name:params", into the codec and
// its frame parameter.
func Parse(spec string) (Codec, uint32, error) {
	name, params, hasParams := strings.Cut(spec, ":")
	c, err := ByName(name)
	if err != nil {
		return nil, 0, err
	}
	p, ok := c.(Parametric)
	switch {
	case !ok && hasParams:
		return nil, 0, errs.New(errs.InvalidArgument, "codec %s takes no parameters (got %q)", name, params)
	case !ok:
		return c, 0, nil
	case !hasParams:
		return c, p.DefaultParam(), nil
	}
	param, err := p.ParseParam(params)
	return c, param, err
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

// IsLossy reports whether c is lossy.
func IsLossy(c Codec) bool {
	l, ok := c.(Lossy)
	return ok && l.Lossy()
}

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

func init() { Register(none{}) }

// none stores chunks as they are.
type none struct{}

func (none) ID() ID                     { return IDNone }
func (none) Name() string               { return "none" }
func (none) Supports(tensor.DType) bool { return true }
func (none) Encode(dst, src []byte, _ Info) ([]byte, uint32, error) {
	return append(dst[:0], src...), 0, nil
}
func (none) Decode(dst, src []byte, _ Info, _ uint32) error {
	if len(src) != len(dst) {
		return corrupt("stored chunk holds %d bytes, want %d", len(src), len(dst))
	}
	copy(dst, src)
	return nil
}
