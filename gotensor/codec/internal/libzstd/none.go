//go:build !(cgo && libzstd)

package libzstd

import "github.com/gotensor/gotensor/gotensor/errs"

// Built reports whether the binary has libzstd: build with the tag libzstd
// (and cgo) where libzstd-dev is installed.
const Built = false

// Params are libzstd compression parameters (see the libzstd build).
type Params struct {
	Level, Strategy, WindowLog, HashLog, ChainLog, SearchLog, MinMatch, TargetLength, MaxBlockSize int
	HuffLiterals, ContentSize, PreSplit                                                            bool
}

// Encoder is only available where Built is true.
type Encoder struct{}

// NewEncoder is only available where Built is true.
func NewEncoder(Params) (*Encoder, error) {
	return nil, errs.New(errs.Internal, "built without libzstd")
}

// Compress is only available where Built is true.
func (*Encoder) Compress(dst, src []byte) ([]byte, error) {
	return nil, errs.New(errs.Internal, "built without libzstd")
}

// Decompress is only available where Built is true.
func Decompress(dst, src []byte) error { return errs.New(errs.Internal, "built without libzstd") }
