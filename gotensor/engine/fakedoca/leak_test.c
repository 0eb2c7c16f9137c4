/*
 * Drives the engine's C half (../doca_engine.c) against the fake DOCA
 * through opens that fail, every task type, a failed task, a lost
 * completion, a stopped context and a close with a task in flight. Built
 * under AddressSanitizer (make doca-fake-test), which fails it on a leak
 * or a bad access; it also checks the fake's own count of live objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zlib.h>

#include "../doca_engine.h"
#include "fakedoca.h"

#include <doca_ctx.h>

static int failures;
#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                           \
		}                                                             \
	} while (0)

static long live(void)
{
	fakedoca_stats s;
	fakedoca_get_stats(&s);
	return s.live;
}

static gt_doca *open_fake(gt_caps *caps)
{
	gt_doca *g = NULL;
	char why[256];
	doca_error_t err = gt_doca_open("3b:00.0", 4, 1 << 20, 1, &g, caps, why, sizeof(why));
	if (err != DOCA_SUCCESS) fprintf(stderr, "open: %s\n", why);
	CHECK(err == DOCA_SUCCESS && g);
	return g;
}

/* runs one task to completion on slot 0; returns its status */
static doca_error_t run(gt_doca *g, int op, const void *src, size_t n, size_t cap, int *spins)
{
	gt_slot *s = gt_doca_slot(g, 0);
	memcpy(s->src, src, n);
	doca_error_t err = gt_doca_submit(g, 0, op, n, cap);
	if (err != DOCA_SUCCESS) return err;
	for (*spins = 0; s->state != GT_SLOT_DONE && *spins < 1000; ++*spins) gt_doca_progress(g);
	return s->state == GT_SLOT_DONE ? s->status : DOCA_ERROR_TIME_OUT;
}

int main(void)
{
	enum { N = 200000 };
	unsigned char *raw = malloc(N), *enc = malloc(2 * N);
	for (int i = 0; i < N; i++) raw[i] = (unsigned char)("tensor"[i % 6] + (i % 251 == 0));
	long live0 = live();
	gt_caps caps;
	int spins;

	/* the first device at the address fails to open, the second opens */
	fakedoca_clear_devices();
	fakedoca_add_device("0000:3b:00.0", FAKEDOCA_CAP_ALL, 1 << 20, 1);
	fakedoca_add_device("0000:3b:00.0", FAKEDOCA_CAP_ALL, 1 << 20, 0);
	gt_doca *g = open_fake(&caps);
	CHECK(caps.has[GT_INFLATE] && caps.has[GT_DEFLATE] && caps.has[GT_LZ4] && caps.slots == 4);

	/* compress on the device, inflate it back */
	CHECK(run(g, GT_DEFLATE, raw, N, caps.slot_bytes, &spins) == DOCA_SUCCESS);
	gt_slot *s = gt_doca_slot(g, 0);
	size_t clen = s->out_len;
	CHECK(s->adler == adler32(adler32(0, NULL, 0), raw, N));
	memcpy(enc, s->dst, clen);
	CHECK(run(g, GT_INFLATE, enc, clen, N, &spins) == DOCA_SUCCESS);
	CHECK(s->out_len == N && memcmp(s->dst, raw, N) == 0);

	int ln = LZ4_compress_default((const char *)raw, (char *)enc, N, 2 * N);
	CHECK(run(g, GT_LZ4, enc, (size_t)ln, N, &spins) == DOCA_SUCCESS && s->out_len == N);

	/* a failed task */
	fakedoca_fail_tasks(1);
	CHECK(run(g, GT_INFLATE, enc, clen, N, &spins) != DOCA_SUCCESS);

	/* a lost completion, recovered by a stop and a start */
	fakedoca_lose_tasks(1);
	CHECK(run(g, GT_INFLATE, enc, clen, N, &spins) == DOCA_ERROR_TIME_OUT);
	CHECK(gt_doca_stop(g) == DOCA_SUCCESS);
	gt_doca_progress(g);
	CHECK(gt_doca_state(g) == DOCA_CTX_STATE_IDLE && s->state == GT_SLOT_DONE);
	CHECK(gt_doca_start(g) == DOCA_SUCCESS);

	/* the device stops the context: the task is flushed, a start recovers */
	fakedoca_stop_context();
	memcpy(s->src, raw, 100);
	CHECK(gt_doca_submit(g, 0, GT_DEFLATE, 100, caps.slot_bytes) == DOCA_SUCCESS);
	gt_doca_progress(g);
	CHECK(s->state == GT_SLOT_DONE && s->status != DOCA_SUCCESS && gt_doca_state(g) == DOCA_CTX_STATE_IDLE);
	CHECK(gt_doca_start(g) == DOCA_SUCCESS);
	CHECK(run(g, GT_DEFLATE, raw, N, caps.slot_bytes, &spins) == DOCA_SUCCESS);

	/* too large a task never reaches the device */
	CHECK(gt_doca_submit(g, 0, GT_INFLATE, caps.slot_bytes + 1, N) == DOCA_ERROR_TOO_BIG);

	/* close with a task in flight */
	fakedoca_lose_tasks(1);
	CHECK(gt_doca_submit(g, 1, GT_DEFLATE, 100, caps.slot_bytes) == DOCA_SUCCESS);
	CHECK(gt_doca_close(g) == DOCA_SUCCESS);

	/* failed opens leave nothing behind */
	fakedoca_clear_devices();
	fakedoca_add_device("0000:3b:00.0", FAKEDOCA_CAP_DEFLATE, 1 << 20, 0);
	char why[128];
	CHECK(gt_doca_open("3b:00.0", 4, 1 << 20, 1, &g, &caps, why, sizeof(why)) == DOCA_ERROR_NOT_SUPPORTED);
	CHECK(gt_doca_open("99:00.0", 4, 1 << 20, 1, &g, &caps, why, sizeof(why)) == DOCA_ERROR_NOT_FOUND);

	CHECK(live() == live0);
	free(raw);
	free(enc);
	if (failures) return 1;
	printf("fake DOCA leak test: ok\n");
	return 0;
}
