//go:build !(cgo && libdeflate)

package libdeflate

import "github.com/gotensor/gotensor/gotensor/errs"

// Built reports whether the binary has libdeflate: build with the tag
// libdeflate (and cgo) where libdeflate-dev is installed.
const Built = false

// Inflate is only available where Built is true.
func Inflate(dst, src []byte) error {
	return errs.New(errs.Internal, "built without libdeflate")
}

// Deflate is only available where Built is true.
func Deflate(dst, src []byte, level int) ([]byte, error) {
	return nil, errs.New(errs.Internal, "built without libdeflate")
}

// Adler32 is only available where Built is true.
func Adler32(b []byte) uint32 { panic("codec: built without libdeflate") }
