//go:build cgo && libdeflate

// Package libdeflate binds the parts of libdeflate (Debian's
// libdeflate-dev) the codecs use: raw DEFLATE decompression and Adler-32,
// several times faster than the pure-Go code that stays their twin in
// builds without the tag libdeflate.
package libdeflate

/*
#cgo pkg-config: libdeflate
#include <libdeflate.h>
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Built reports whether the binary has libdeflate.
const Built = true

// Idle decompressors, freed when the list is full.
var idle = make(chan *C.struct_libdeflate_decompressor, 2*runtime.NumCPU()+2)

// Inflate decodes the raw DEFLATE stream src, which must fill dst exactly
// and end where src ends; malformed input is a CorruptData error.
func Inflate(dst, src []byte) error {
	var d *C.struct_libdeflate_decompressor
	select {
	case d = <-idle:
	default:
		if d = C.libdeflate_alloc_decompressor(); d == nil {
			return errs.New(errs.Internal, "libdeflate: out of memory for a decompressor")
		}
	}
	defer func() {
		select {
		case idle <- d:
		default:
			C.libdeflate_free_decompressor(d)
		}
	}()
	var used C.size_t
	r := C.libdeflate_deflate_decompress_ex(d, ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst)), &used, nil)
	switch {
	case r == C.LIBDEFLATE_SHORT_OUTPUT:
		return errs.New(errs.CorruptData, "deflate: stream ended early: %d bytes wanted", len(dst))
	case r == C.LIBDEFLATE_INSUFFICIENT_SPACE:
		return errs.New(errs.CorruptData, "deflate: stream holds more than %d bytes", len(dst))
	case r != C.LIBDEFLATE_SUCCESS:
		return errs.New(errs.CorruptData, "deflate: invalid stream")
	case int(used) != len(src):
		return errs.New(errs.CorruptData, "deflate: %d bytes after the end of the stream", len(src)-int(used))
	}
	return nil
}

// Adler32 is the Adler-32 of b.
func Adler32(b []byte) uint32 {
	return uint32(C.libdeflate_adler32(1, ptr(b), C.size_t(len(b))))
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}
