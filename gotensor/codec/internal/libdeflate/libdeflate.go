//go:build cgo && libdeflate

// Package libdeflate binds the parts of libdeflate (Debian's
// libdeflate-dev) the codecs use: raw DEFLATE compression and
// decompression and Adler-32, faster than the pure-Go code (Go's
// compress/flate, the project's own) that stays their twin in builds
// without the tag libdeflate.
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

// compressors are idle compressors by level (1-12), freed when a list is
// full.
var compressors [13]chan *C.struct_libdeflate_compressor

func init() {
	for i := range compressors {
		compressors[i] = make(chan *C.struct_libdeflate_compressor, 2*runtime.NumCPU()+2)
	}
}

// Deflate appends src as one raw DEFLATE stream at libdeflate's level
// (1-12) to dst[:0]. Where dst has room for len(src) bytes but not for
// libdeflate's bound, it compresses into dst as it is and, should the
// stream not fit, returns a copy of src: a result no smaller than src,
// which the frame stores raw.
func Deflate(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level >= len(compressors) {
		return nil, errs.New(errs.InvalidArgument, "libdeflate: level %d is not in [1, %d]", level, len(compressors)-1)
	}
	var c *C.struct_libdeflate_compressor
	select {
	case c = <-compressors[level]:
	default:
		if c = C.libdeflate_alloc_compressor(C.int(level)); c == nil {
			return nil, errs.New(errs.Internal, "libdeflate: out of memory for a compressor")
		}
	}
	defer func() {
		select {
		case compressors[level] <- c:
		default:
			C.libdeflate_free_compressor(c)
		}
	}()
	if cap(dst) < len(src) || cap(dst) < 64 {
		dst = make([]byte, int(C.libdeflate_deflate_compress_bound(c, C.size_t(len(src)))))
	}
	dst = dst[:cap(dst)]
	n := int(C.libdeflate_deflate_compress(c, ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst))))
	if n == 0 { // no room: src does not shrink into dst
		return append(dst[:0], src...), nil
	}
	return dst[:n], nil
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
