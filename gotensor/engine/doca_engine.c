//go:build doca

#include "doca_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_version.h>

/* The LZ4 block task arrived in DOCA 2.7; older SDKs inflate LZ4 in software. */
#if DOCA_VERSION_MAJOR > 2 || (DOCA_VERSION_MAJOR == 2 && DOCA_VERSION_MINOR >= 7)
#define GT_HAVE_LZ4_BLOCK 1
#else
#define GT_HAVE_LZ4_BLOCK 0
#endif

struct gt_doca {
	struct doca_dev *dev;
	struct doca_compress *compress;
	struct doca_pe *pe;
	struct doca_buf_inventory *inv;
	struct doca_mmap *msrc, *mdst;
	uint8_t *mem_src, *mem_dst;
	int ctx_state;
	int started;
	gt_caps caps;
	gt_slot *slots;
};

static void release(gt_slot *s)
{
	if (s->task) doca_task_free(s->task);
	if (s->bsrc) doca_buf_dec_refcount(s->bsrc, NULL);
	if (s->bdst) doca_buf_dec_refcount(s->bdst, NULL);
	s->task = NULL;
	s->bsrc = s->bdst = NULL;
	s->state = GT_SLOT_DONE;
}

static void finish_ok(gt_slot *s, uint32_t adler)
{
	size_t n = 0;
	s->status = doca_buf_get_data_len(s->bdst, &n);
	s->out_len = n;
	s->adler = adler;
	release(s);
}

/* error callbacks record the status only: a failed task has no checksum */
static void finish_err(gt_slot *s, struct doca_task *t)
{
	s->status = doca_task_get_status(t);
	if (s->status == DOCA_SUCCESS) s->status = DOCA_ERROR_UNKNOWN;
	release(s);
}

static void inflate_ok(struct doca_compress_task_decompress_deflate *t, union doca_data ud, union doca_data cd)
{
	(void)cd;
	finish_ok(ud.ptr, doca_compress_task_decompress_deflate_get_adler_cs(t));
}
static void inflate_err(struct doca_compress_task_decompress_deflate *t, union doca_data ud, union doca_data cd)
{
	(void)cd;
	finish_err(ud.ptr, doca_compress_task_decompress_deflate_as_task(t));
}
static void deflate_ok(struct doca_compress_task_compress_deflate *t, union doca_data ud, union doca_data cd)
{
	(void)cd;
	finish_ok(ud.ptr, doca_compress_task_compress_deflate_get_adler_cs(t));
}
static void deflate_err(struct doca_compress_task_compress_deflate *t, union doca_data ud, union doca_data cd)
{
	(void)cd;
	finish_err(ud.ptr, doca_compress_task_compress_deflate_as_task(t));
}
#if GT_HAVE_LZ4_BLOCK
static void lz4_ok(struct doca_compress_task_decompress_lz4_block *t, union doca_data ud, union doca_data cd)
{
	(void)t;
	(void)cd;
	finish_ok(ud.ptr, 0);
}
static void lz4_err(struct doca_compress_task_decompress_lz4_block *t, union doca_data ud, union doca_data cd)
{
	(void)cd;
	finish_err(ud.ptr, doca_compress_task_decompress_lz4_block_as_task(t));
}
#endif

static void state_changed(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
			  enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	((gt_doca *)ud.ptr)->ctx_state = next;
}

static void query_caps(struct doca_devinfo *di, gt_caps *c)
{
	memset(c, 0, sizeof(*c));
	c->has[GT_INFLATE] = doca_compress_cap_task_decompress_deflate_is_supported(di) == DOCA_SUCCESS &&
			     doca_compress_cap_task_decompress_deflate_get_max_buf_size(di, &c->max_buf[GT_INFLATE]) == DOCA_SUCCESS;
	c->has[GT_DEFLATE] = doca_compress_cap_task_compress_deflate_is_supported(di) == DOCA_SUCCESS &&
			     doca_compress_cap_task_compress_deflate_get_max_buf_size(di, &c->max_buf[GT_DEFLATE]) == DOCA_SUCCESS;
#if GT_HAVE_LZ4_BLOCK
	c->has[GT_LZ4] = doca_compress_cap_task_decompress_lz4_block_is_supported(di) == DOCA_SUCCESS &&
			 doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(di, &c->max_buf[GT_LZ4]) == DOCA_SUCCESS;
#endif
	for (int op = 0; op < GT_OPS; op++)
		if (c->max_buf[op] == 0) c->has[op] = 0;
}

/* destroys whatever setup built, in reverse order; the context must be idle */
static void teardown(gt_doca *g)
{
	if (g->compress) doca_compress_destroy(g->compress);
	if (g->pe) doca_pe_destroy(g->pe);
	if (g->slots)
		for (uint32_t i = 0; i < g->caps.slots; i++) release(&g->slots[i]);
	if (g->inv) {
		doca_buf_inventory_stop(g->inv);
		doca_buf_inventory_destroy(g->inv);
	}
	if (g->msrc) {
		doca_mmap_stop(g->msrc);
		doca_mmap_destroy(g->msrc);
	}
	if (g->mdst) {
		doca_mmap_stop(g->mdst);
		doca_mmap_destroy(g->mdst);
	}
	free(g->mem_src);
	free(g->mem_dst);
	free(g->slots);
	if (g->dev) doca_dev_close(g->dev);
	free(g);
}

static doca_error_t map(gt_doca *g, uint8_t *mem, size_t len, uint32_t access, struct doca_mmap **m)
{
	doca_error_t err = doca_mmap_create(m);
	if (err != DOCA_SUCCESS) return err;
	if ((err = doca_mmap_set_memrange(*m, mem, len)) != DOCA_SUCCESS) return err;
	if ((err = doca_mmap_set_permissions(*m, access)) != DOCA_SUCCESS) return err;
	if ((err = doca_mmap_add_dev(*m, g->dev)) != DOCA_SUCCESS) return err;
	return doca_mmap_start(*m);
}

#define STEP(call, what)                                            \
	do {                                                        \
		if ((err = (call)) != DOCA_SUCCESS) {               \
			snprintf(why, whylen, "%s: %s", what, doca_error_get_descr(err)); \
			return err;                                 \
		}                                                   \
	} while (0)

static doca_error_t setup(gt_doca *g, struct doca_devinfo *di, uint32_t want_slots, size_t want_bytes,
			  int want_compress, char *why, size_t whylen)
{
	doca_error_t err;
	gt_caps *c = &g->caps;
	query_caps(di, c);
	if (!c->has[GT_INFLATE]) {
		snprintf(why, whylen, "the device has no DEFLATE decompression");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!want_compress) c->has[GT_DEFLATE] = 0;
	STEP(doca_dev_open(di, &g->dev), "doca_dev_open");
	STEP(doca_compress_create(g->dev, &g->compress), "doca_compress_create");
	uint32_t max_tasks = 0;
	STEP(doca_compress_cap_get_max_num_tasks(g->compress, &max_tasks), "max tasks");
	c->slots = want_slots < max_tasks ? want_slots : max_tasks;
	if (c->slots == 0) c->slots = 1;
	c->slot_bytes = want_bytes;
	for (int op = 0; op < GT_OPS; op++)
		if (c->has[op] && c->max_buf[op] < c->slot_bytes) c->slot_bytes = c->max_buf[op];
	STEP(doca_compress_task_decompress_deflate_set_conf(g->compress, inflate_ok, inflate_err, c->slots),
	     "DEFLATE decompress task");
	/* the optional tasks fail alone: DEFLATE decompression still runs */
	if (c->has[GT_DEFLATE] &&
	    doca_compress_task_compress_deflate_set_conf(g->compress, deflate_ok, deflate_err, c->slots) != DOCA_SUCCESS)
		c->has[GT_DEFLATE] = 0;
#if GT_HAVE_LZ4_BLOCK
	if (c->has[GT_LZ4] &&
	    doca_compress_task_decompress_lz4_block_set_conf(g->compress, lz4_ok, lz4_err, c->slots) != DOCA_SUCCESS)
		c->has[GT_LZ4] = 0;
#endif
	struct doca_ctx *ctx = doca_compress_as_ctx(g->compress);
	STEP(doca_ctx_set_user_data(ctx, (union doca_data){.ptr = g}), "ctx user data");
	STEP(doca_ctx_set_state_changed_cb(ctx, state_changed), "ctx state callback");
	STEP(doca_pe_create(&g->pe), "doca_pe_create");
	STEP(doca_pe_connect_ctx(g->pe, ctx), "doca_pe_connect_ctx");
	size_t total = (size_t)c->slots * c->slot_bytes;
	g->slots = calloc(c->slots, sizeof(gt_slot));
	g->mem_src = malloc(total);
	g->mem_dst = malloc(total);
	if (!g->slots || !g->mem_src || !g->mem_dst) {
		snprintf(why, whylen, "allocating %zu bytes of task buffers", 2 * total);
		return DOCA_ERROR_NO_MEMORY;
	}
	STEP(map(g, g->mem_src, total, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY, &g->msrc), "source mmap");
	STEP(map(g, g->mem_dst, total, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, &g->mdst), "destination mmap");
	STEP(doca_buf_inventory_create(2 * (size_t)c->slots, &g->inv), "doca_buf_inventory_create");
	STEP(doca_buf_inventory_start(g->inv), "doca_buf_inventory_start");
	for (uint32_t i = 0; i < c->slots; i++) {
		g->slots[i].src = g->mem_src + (size_t)i * c->slot_bytes;
		g->slots[i].dst = g->mem_dst + (size_t)i * c->slot_bytes;
	}
	STEP(gt_doca_start(g), "doca_ctx_start");
	return DOCA_SUCCESS;
}

doca_error_t gt_doca_open(const char *pci, uint32_t want_slots, size_t want_bytes, int want_compress,
			  gt_doca **out, gt_caps *caps, char *why, size_t whylen)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	*out = NULL;
	doca_error_t err = doca_devinfo_create_list(&list, &n);
	if (err != DOCA_SUCCESS) {
		snprintf(why, whylen, "listing DOCA devices: %s", doca_error_get_descr(err));
		return err;
	}
	err = DOCA_ERROR_NOT_FOUND;
	snprintf(why, whylen, "no DOCA device at PCI address %s", pci);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t same = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &same) != DOCA_SUCCESS || !same) continue;
		gt_doca *g = calloc(1, sizeof(*g));
		if (!g) {
			err = DOCA_ERROR_NO_MEMORY;
			break;
		}
		err = setup(g, list[i], want_slots, want_bytes, want_compress, why, whylen);
		if (err == DOCA_SUCCESS) {
			*caps = g->caps;
			*out = g;
			break;
		}
		if (g->started) doca_ctx_stop(doca_compress_as_ctx(g->compress));
		teardown(g); /* and try the next device at this address */
	}
	doca_devinfo_destroy_list(list);
	return err;
}

doca_error_t gt_doca_close(gt_doca *g)
{
	if (g->started && g->ctx_state != DOCA_CTX_STATE_IDLE) {
		gt_doca_stop(g);
		gt_doca_progress(g);
		if (g->ctx_state != DOCA_CTX_STATE_IDLE) return DOCA_ERROR_IN_PROGRESS;
	}
	teardown(g);
	return DOCA_SUCCESS;
}

gt_slot *gt_doca_slot(gt_doca *g, uint32_t i) { return &g->slots[i]; }

doca_error_t gt_doca_submit(gt_doca *g, uint32_t i, int op, size_t src_len, size_t dst_cap)
{
	gt_slot *s = &g->slots[i];
	if (op < 0 || op >= GT_OPS || !g->caps.has[op]) return DOCA_ERROR_NOT_SUPPORTED;
	if (src_len > g->caps.slot_bytes || dst_cap > g->caps.slot_bytes) return DOCA_ERROR_TOO_BIG;
	if (s->state == GT_SLOT_BUSY) return DOCA_ERROR_IN_USE;
	s->status = DOCA_ERROR_UNKNOWN;
	s->out_len = 0;
	s->adler = 0;
	union doca_data ud = {.ptr = s};
	doca_error_t err = doca_buf_inventory_buf_get_by_data(g->inv, g->msrc, s->src, src_len, &s->bsrc);
	if (err == DOCA_SUCCESS) err = doca_buf_inventory_buf_get_by_addr(g->inv, g->mdst, s->dst, dst_cap, &s->bdst);
	if (err == DOCA_SUCCESS) {
		switch (op) {
		case GT_INFLATE: {
			struct doca_compress_task_decompress_deflate *t;
			err = doca_compress_task_decompress_deflate_alloc_init(g->compress, s->bsrc, s->bdst, ud, &t);
			if (err == DOCA_SUCCESS) s->task = doca_compress_task_decompress_deflate_as_task(t);
			break;
		}
		case GT_DEFLATE: {
			struct doca_compress_task_compress_deflate *t;
			err = doca_compress_task_compress_deflate_alloc_init(g->compress, s->bsrc, s->bdst, ud, &t);
			if (err == DOCA_SUCCESS) s->task = doca_compress_task_compress_deflate_as_task(t);
			break;
		}
#if GT_HAVE_LZ4_BLOCK
		case GT_LZ4: {
			struct doca_compress_task_decompress_lz4_block *t;
			err = doca_compress_task_decompress_lz4_block_alloc_init(g->compress, s->bsrc, s->bdst, ud, &t);
			if (err == DOCA_SUCCESS) s->task = doca_compress_task_decompress_lz4_block_as_task(t);
			break;
		}
#endif
		default:
			err = DOCA_ERROR_NOT_SUPPORTED;
		}
	}
	if (err == DOCA_SUCCESS) err = doca_task_submit(s->task);
	if (err != DOCA_SUCCESS) {
		release(s);
		s->state = GT_SLOT_IDLE;
		return err;
	}
	s->state = GT_SLOT_BUSY;
	return DOCA_SUCCESS;
}

int gt_doca_progress(gt_doca *g)
{
	int n = 0;
	while (n < 1024 && doca_pe_progress(g->pe)) n++;
	return n;
}

int gt_doca_state(gt_doca *g)
{
	enum doca_ctx_states st;
	if (doca_ctx_get_state(doca_compress_as_ctx(g->compress), &st) == DOCA_SUCCESS) g->ctx_state = st;
	return g->ctx_state;
}

doca_error_t gt_doca_stop(gt_doca *g)
{
	doca_error_t err = doca_ctx_stop(doca_compress_as_ctx(g->compress));
	gt_doca_state(g);
	return err == DOCA_ERROR_IN_PROGRESS ? DOCA_SUCCESS : err;
}

doca_error_t gt_doca_start(gt_doca *g)
{
	doca_error_t err = doca_ctx_start(doca_compress_as_ctx(g->compress));
	if (err == DOCA_SUCCESS) g->started = 1;
	gt_doca_state(g);
	return err;
}
