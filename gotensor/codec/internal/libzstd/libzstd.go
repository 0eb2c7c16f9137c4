//go:build cgo && libzstd

// Package libzstd binds the parts of libzstd (Debian's libzstd-dev) the
// zstd codecs use: one-shot compression with fixed parameters and
// decompression into a caller's buffer. klauspost/compress stays the
// pure-Go twin in builds without the tag libzstd; both write and read the
// same stream, a zstd frame.
package libzstd

/*
#cgo pkg-config: libzstd
#define ZSTD_STATIC_LINKING_ONLY // names only (ZSTD_c_literalCompressionMode): every call is in the stable ABI
#include <zstd.h>
#include <zstd_errors.h>
#include "presplit.h"
#if ZSTD_VERSION_NUMBER < 10504
#error "gotensor's libzstd build needs libzstd >= 1.5.4 (ZSTD_c_maxBlockSize)"
#endif

static size_t gt_set(ZSTD_CCtx *c, int p, int v) { return ZSTD_CCtx_setParameter(c, (ZSTD_cParameter)p, v); }
static int gt_is_error(size_t r) { return ZSTD_isError(r); }
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Built reports whether the binary has libzstd.
const Built = true

// Params are libzstd compression parameters; a zero field keeps the
// level's own value.
type Params struct {
	Level        int  // ZSTD_c_compressionLevel
	Strategy     int  // ZSTD_c_strategy (1 fast .. 9 btultra2)
	WindowLog    int  // ZSTD_c_windowLog
	HashLog      int  // ZSTD_c_hashLog
	ChainLog     int  // ZSTD_c_chainLog
	SearchLog    int  // ZSTD_c_searchLog
	MinMatch     int  // ZSTD_c_minMatch
	TargetLength int  // ZSTD_c_targetLength
	MaxBlockSize int  // ZSTD_c_maxBlockSize: blocks of at most this many bytes (each its own Huffman table); 0: 128 KiB
	HuffLiterals bool // Huffman-code literals even at levels that would store them (negative ones)
	ContentSize  bool // write the content size into the frame header
	PreSplit     bool // end full blocks early where the byte statistics change (libzstd 1.5.7's splitter for dfast levels); 128 KiB blocks
}

func (p Params) set(c *C.ZSTD_CCtx) error {
	type kv struct{ k, v int }
	list := []kv{{C.ZSTD_c_compressionLevel, p.Level}, {C.ZSTD_c_checksumFlag, 0}, {C.ZSTD_c_dictIDFlag, 0},
		{C.ZSTD_c_contentSizeFlag, b2i(p.ContentSize)}}
	for _, o := range []kv{{C.ZSTD_c_strategy, p.Strategy}, {C.ZSTD_c_windowLog, p.WindowLog}, {C.ZSTD_c_hashLog, p.HashLog},
		{C.ZSTD_c_chainLog, p.ChainLog}, {C.ZSTD_c_searchLog, p.SearchLog}, {C.ZSTD_c_minMatch, p.MinMatch},
		{C.ZSTD_c_targetLength, p.TargetLength}, {C.ZSTD_c_maxBlockSize, p.MaxBlockSize}} {
		if o.v != 0 {
			list = append(list, o)
		}
	}
	if p.HuffLiterals {
		list = append(list, kv{C.ZSTD_c_literalCompressionMode, C.ZSTD_ps_enable})
	}
	if p.PreSplit { // gt_compress_presplit streams from src into dst
		list = append(list, kv{C.ZSTD_c_stableInBuffer, 1}, kv{C.ZSTD_c_stableOutBuffer, 1})
	}
	for _, o := range list {
		if r := C.gt_set(c, C.int(o.k), C.int(o.v)); C.gt_is_error(r) != 0 {
			return errs.New(errs.InvalidArgument, "libzstd: parameter %d = %d: %s", o.k, o.v, C.GoString(C.ZSTD_getErrorName(r)))
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxBlock is zstd's largest block: inputs no larger are one block.
const maxBlock = 128 << 10

// Encoder compresses with one set of parameters; safe for concurrent use.
type Encoder struct {
	p    Params
	idle chan *C.ZSTD_CCtx // idle contexts, freed when the list is full
}

// NewEncoder checks p on a first context and returns an Encoder using it;
// its idle contexts are freed once it is unreachable.
func NewEncoder(p Params) (*Encoder, error) {
	e := &Encoder{p: p, idle: make(chan *C.ZSTD_CCtx, 2*runtime.NumCPU()+2)}
	c, err := e.get()
	if err != nil {
		return nil, err
	}
	e.put(c)
	runtime.AddCleanup(e, freeIdle, e.idle)
	return e, nil
}

// freeIdle frees the contexts in idle, which nothing else holds.
func freeIdle(idle chan *C.ZSTD_CCtx) {
	for {
		select {
		case c := <-idle:
			C.ZSTD_freeCCtx(c)
		default:
			return
		}
	}
}

func (e *Encoder) get() (*C.ZSTD_CCtx, error) {
	select {
	case c := <-e.idle:
		return c, nil
	default:
	}
	c := C.ZSTD_createCCtx()
	if c == nil {
		return nil, errs.New(errs.Internal, "libzstd: out of memory for a compression context")
	}
	if err := e.p.set(c); err != nil {
		C.ZSTD_freeCCtx(c)
		return nil, err
	}
	return c, nil
}

func (e *Encoder) put(c *C.ZSTD_CCtx) {
	select {
	case e.idle <- c:
	default:
		C.ZSTD_freeCCtx(c)
	}
}

// Compress appends one zstd frame holding src to dst[:0]. Where dst has
// room for len(src) bytes but not for libzstd's bound, it compresses into
// dst as it is and, should the frame not fit, returns a copy of src: a
// result no smaller than src, which the frame stores raw.
func (e *Encoder) Compress(dst, src []byte) ([]byte, error) {
	bound := int(C.ZSTD_compressBound(C.size_t(len(src))))
	if cap(dst) < len(src) || cap(dst) < 64 {
		dst = make([]byte, bound)
	}
	dst = dst[:cap(dst)]
	c, err := e.get()
	if err != nil {
		return nil, err
	}
	defer e.put(c)
	var n C.size_t
	if e.p.PreSplit && len(src) > maxBlock {
		n = C.gt_compress_presplit(c, ptr(dst), C.size_t(len(dst)), ptr(src), C.size_t(len(src)))
	} else {
		n = C.ZSTD_compress2(c, ptr(dst), C.size_t(len(dst)), ptr(src), C.size_t(len(src)))
	}
	switch {
	case C.gt_is_error(n) == 0:
		return dst[:n], nil
	case C.ZSTD_getErrorCode(n) == C.ZSTD_error_dstSize_tooSmall && len(dst) < bound:
		return append(dst[:0], src...), nil
	}
	return nil, errs.New(errs.Internal, "libzstd: compress: %s", C.GoString(C.ZSTD_getErrorName(n)))
}

// Idle decompression contexts, freed when the list is full.
var idleD = make(chan *C.ZSTD_DCtx, 2*runtime.NumCPU()+2)

// Decompress decodes the zstd frames in src, which must fill dst exactly;
// malformed input is a CorruptData error.
func Decompress(dst, src []byte) error {
	var d *C.ZSTD_DCtx
	select {
	case d = <-idleD:
	default:
		if d = C.ZSTD_createDCtx(); d == nil {
			return errs.New(errs.Internal, "libzstd: out of memory for a decompression context")
		}
	}
	defer func() {
		select {
		case idleD <- d:
		default:
			C.ZSTD_freeDCtx(d)
		}
	}()
	n := C.ZSTD_decompressDCtx(d, ptr(dst), C.size_t(len(dst)), ptr(src), C.size_t(len(src)))
	switch {
	case C.gt_is_error(n) != 0:
		return errs.New(errs.CorruptData, "zstd: %s", C.GoString(C.ZSTD_getErrorName(n)))
	case int(n) != len(dst):
		return errs.New(errs.CorruptData, "zstd: frame decoded to %d bytes, want %d", int(n), len(dst))
	}
	return nil
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}
