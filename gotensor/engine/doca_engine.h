/*
 * The C half of gotensor's DOCA engine (doca_engine.c): one DOCA Compress
 * context on one device, with a fixed set of task slots whose staging
 * buffers are registered once (sources read-only, destinations
 * read-write). Nothing here blocks: the Go half (doca.go) submits, drives
 * the progress engine with a backoff and a timeout, and restarts the
 * context when it stops. Callers serialise all calls on one gt_doca.
 */
#ifndef GT_DOCA_ENGINE_H_
#define GT_DOCA_ENGINE_H_

#ifndef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_ALLOW_EXPERIMENTAL_API
#endif
#include <stddef.h>
#include <stdint.h>
#include <doca_error.h>

enum gt_op { GT_INFLATE = 0, GT_DEFLATE = 1, GT_LZ4 = 2, GT_OPS = 3 };
enum gt_slot_state { GT_SLOT_IDLE = 0, GT_SLOT_BUSY = 1, GT_SLOT_DONE = 2 };

struct doca_buf;
struct doca_task;

typedef struct {
	uint8_t *src, *dst;		/* staging areas, slot_bytes each */
	struct doca_buf *bsrc, *bdst;
	struct doca_task *task;
	int state;			/* enum gt_slot_state */
	doca_error_t status;
	size_t out_len;
	uint32_t adler;
} gt_slot;

typedef struct gt_doca gt_doca;

/* what gt_doca_open found: per op whether the device does it and its max buffer */
typedef struct {
	int has[GT_OPS];
	uint64_t max_buf[GT_OPS];
	uint32_t slots;
	size_t slot_bytes;
} gt_caps;

/* Opens the first device at pci that has DEFLATE decompression and sets it
 * up, trying every match in turn. why receives a message on failure. */
doca_error_t gt_doca_open(const char *pci, uint32_t want_slots, size_t want_bytes, int want_compress,
			  gt_doca **out, gt_caps *caps, char *why, size_t whylen);
/* Stops the context (flushing its tasks) and destroys everything. Returns
 * DOCA_ERROR_IN_PROGRESS (and frees nothing) while tasks are still in flight. */
doca_error_t gt_doca_close(gt_doca *g);
gt_slot *gt_doca_slot(gt_doca *g, uint32_t i);
/* Submits op on slot i: src_len bytes staged in its source area, dst_cap
 * the room allowed in its destination. */
doca_error_t gt_doca_submit(gt_doca *g, uint32_t i, int op, size_t src_len, size_t dst_cap);
/* Runs completions; returns how many events the progress engine reported. */
int gt_doca_progress(gt_doca *g);
int gt_doca_state(gt_doca *g);		/* enum doca_ctx_states */
doca_error_t gt_doca_stop(gt_doca *g);	/* begins a stop; progress flushes the tasks */
doca_error_t gt_doca_start(gt_doca *g);

#endif
