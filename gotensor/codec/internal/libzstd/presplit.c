//go:build cgo && libzstd

// Block pre-splitting as libzstd 1.5.7 does it for its dfast levels
// (lib/compress/zstd_preSplit.c, ZSTD_splitBlock_byChunks at sampling
// rate 43; BSD licence), driven from outside for libzstd 1.5.4, which
// has no splitter at those levels: each full 128 KiB block ends early
// where the byte statistics of the next 8 KiB part from those seen so
// far, so that each stretch gets its own Huffman table. A flush ends a
// block; the match window runs on across it.

#define ZSTD_STATIC_LINKING_ONLY
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "presplit.h"

#define GT_BLOCK (128 << 10)
#define GT_PART (8 << 10)
#define GT_RATE 43

typedef struct {
	unsigned events[256];
	size_t n;
} gt_fingerprint;

// gt_record counts the first byte of every GT_RATE-th pair in p[0:size]
// (the count as libzstd keeps it: rounded down).
static void gt_record(gt_fingerprint *fp, const unsigned char *p, size_t size) {
	size_t limit = size - 1;
	memset(fp, 0, sizeof *fp);
	for (size_t i = 0; i < limit; i += GT_RATE) fp->events[p[i]]++;
	fp->n = limit / GT_RATE;
}

// gt_differs reports whether the distribution of b parts from a's by the
// threshold libzstd uses: 14/16 of the largest distance, raised by penalty.
static int gt_differs(const gt_fingerprint *a, const gt_fingerprint *b, int penalty) {
	unsigned long long dist = 0;
	for (int i = 0; i < 256; i++) {
		long long d = (long long)a->events[i] * (long long)b->n - (long long)b->events[i] * (long long)a->n;
		dist += (unsigned long long)(d < 0 ? -d : d);
	}
	return dist >= (unsigned long long)a->n * b->n * (unsigned long long)(14 + penalty) / 16;
}

// gt_block_size is the size of the block starting at p, n bytes left.
static size_t gt_block_size(const unsigned char *p, size_t n) {
	gt_fingerprint past, next;
	int penalty = 3;
	if (n <= GT_BLOCK) return n;
	gt_record(&past, p, GT_PART);
	for (size_t pos = GT_PART; pos <= GT_BLOCK - GT_PART; pos += GT_PART) {
		gt_record(&next, p + pos, GT_PART);
		if (gt_differs(&past, &next, penalty)) return pos;
		for (int i = 0; i < 256; i++) past.events[i] += next.events[i];
		past.n += next.n;
		if (penalty > 0) penalty--;
	}
	return GT_BLOCK;
}

// gt_finish codes what in holds and flushes it (mode flush or end); with
// stable buffers libzstd errs where out has no room, and a call that moves
// nothing is taken as that too.
static size_t gt_finish(ZSTD_CCtx *c, ZSTD_outBuffer *out, ZSTD_inBuffer *in, ZSTD_EndDirective mode) {
	for (;;) {
		size_t opos = out->pos, ipos = in->pos;
		size_t r = ZSTD_compressStream2(c, out, in, mode);
		if (ZSTD_isError(r) || r == 0) return r;
		if (out->pos == opos && in->pos == ipos) return (size_t)-ZSTD_error_dstSize_tooSmall;
	}
}

size_t gt_compress_presplit(ZSTD_CCtx *c, void *dst, size_t cap, const void *src, size_t n) {
	ZSTD_outBuffer out = {dst, cap, 0};
	ZSTD_inBuffer in = {src, 0, 0};
	const unsigned char *p = src;
	long long savings = 0;
	size_t r = ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
	if (ZSTD_isError(r)) return r;
	if (ZSTD_isError(r = ZSTD_CCtx_setPledgedSrcSize(c, n))) return r;
	while (in.size < n) {
		// the first block too (libzstd waits for it to save 3 bytes: on
		// weights that leaves one 128 KiB block per chunk unsplit), then
		// only once the frame has saved 3 bytes (not on incompressible data)
		size_t bs = savings < 3 && in.size > 0 ? (n - in.size < GT_BLOCK ? n - in.size : GT_BLOCK) : gt_block_size(p + in.size, n - in.size);
		size_t before = out.pos;
		in.size += bs;
		ZSTD_EndDirective mode = in.size == n ? ZSTD_e_end : ZSTD_e_flush;
		if (ZSTD_isError(r = gt_finish(c, &out, &in, mode))) return r;
		savings += (long long)bs - (long long)(out.pos - before);
	}
	if (n == 0 && ZSTD_isError(r = gt_finish(c, &out, &in, ZSTD_e_end))) return r;
	return out.pos;
}
