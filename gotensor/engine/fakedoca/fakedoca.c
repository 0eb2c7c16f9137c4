/*
 * A software DOCA Compress for tests: the subset gotensor's engine uses,
 * declared in include/fakedoca_decls.h, doing the work with zlib (raw
 * DEFLATE, as the device) and liblz4, with faults injected through
 * fakedoca.h. Tasks run when submitted and complete at a later progress.
 */
#define _GNU_SOURCE
#include "fakedoca.h"

#include <lz4.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "include/fakedoca_decls.h"

static pthread_mutex_t mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

static atomic_long live;
#define NEW(T) (atomic_fetch_add(&live, 1), (T *)calloc(1, sizeof(T)))
#define DEL(p) (atomic_fetch_sub(&live, 1), free(p))

struct doca_devinfo {
	char pci[32];
	unsigned caps;
	uint64_t max_buf;
	int open_fails;
};

#define MAX_DEVS 8
static struct {
	struct doca_devinfo devs[MAX_DEVS];
	int ndevs;
	uint32_t max_tasks;
	int fail, lose, stop, lz4_conf_fails;
	unsigned delay_us;
	fakedoca_stats st;
	long inflight;
} fk;

enum { T_DEFLATE, T_INFLATE, T_LZ4, T_KINDS };

struct doca_dev {
	struct doca_devinfo info;
};
struct doca_mmap {
	uint8_t *addr;
	size_t len;
	uint32_t access;
	int started;
	struct doca_dev *dev;
};
struct doca_buf_inventory {
	size_t cap, used;
	int started;
};
struct doca_buf {
	struct doca_buf_inventory *inv;
	struct doca_mmap *mmap;
	uint8_t *head, *data;
	size_t len, data_len;
	uint16_t refs;
};

typedef void (*task_cb)(void *task, union doca_data task_ud, union doca_data ctx_ud);

struct doca_task {
	int kind;
	struct doca_compress *c;
	const struct doca_buf *src;
	struct doca_buf *dst;
	union doca_data ud;
	doca_error_t status;
	uint32_t adler;
	int submitted, completed, lost;
	uint64_t due_ns;
	struct doca_task *next; /* in the context's in-flight list */
};
/* every task type is a doca_task underneath */
struct doca_compress_task_compress_deflate { struct doca_task t; };
struct doca_compress_task_decompress_deflate { struct doca_task t; };
struct doca_compress_task_decompress_lz4_block { struct doca_task t; };

struct doca_ctx {
	struct doca_compress *c;
	enum doca_ctx_states state;
	union doca_data ud;
	doca_ctx_state_changed_callback_t state_cb;
	struct doca_pe *pe;
};
struct doca_compress {
	struct doca_ctx ctx;
	struct doca_dev *dev;
	struct {
		task_cb ok, err;
		uint32_t num, allocated;
	} conf[T_KINDS];
	struct doca_task *inflight;
};
struct doca_pe {
	struct doca_ctx *ctx;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- control ---- */

void fakedoca_clear_devices(void)
{
	LOCK();
	fk.ndevs = 0;
	UNLOCK();
}

void fakedoca_add_device(const char *pci, unsigned caps, uint64_t max_buf, int open_fails)
{
	LOCK();
	if (fk.ndevs < MAX_DEVS) {
		struct doca_devinfo *d = &fk.devs[fk.ndevs++];
		strncpy(d->pci, pci, sizeof(d->pci) - 1);
		d->caps = caps;
		d->max_buf = max_buf;
		d->open_fails = open_fails;
	}
	UNLOCK();
}

void fakedoca_reset(void)
{
	LOCK();
	long inflight = fk.inflight;
	memset(&fk, 0, sizeof(fk));
	fk.inflight = inflight;
	fk.max_tasks = 64;
	fakedoca_add_device("0000:3b:00.0", FAKEDOCA_CAP_ALL, 2 << 20, 0);
	UNLOCK();
}

void fakedoca_set_max_tasks(uint32_t n) { LOCK(); fk.max_tasks = n; UNLOCK(); }
void fakedoca_fail_tasks(int n) { LOCK(); fk.fail = n; UNLOCK(); }
void fakedoca_lose_tasks(int n) { LOCK(); fk.lose = n; UNLOCK(); }
void fakedoca_stop_context(void) { LOCK(); fk.stop = 1; UNLOCK(); }
void fakedoca_fail_lz4_conf(int on) { LOCK(); fk.lz4_conf_fails = on; UNLOCK(); }
void fakedoca_set_delay_us(unsigned us) { LOCK(); fk.delay_us = us; UNLOCK(); }

void fakedoca_get_stats(fakedoca_stats *s)
{
	LOCK();
	*s = fk.st;
	s->live = atomic_load(&live);
	UNLOCK();
}

__attribute__((constructor)) static void fakedoca_init(void) { fakedoca_reset(); }

/* ---- errors, devices ---- */

const char *doca_error_get_name(doca_error_t e)
{
	switch (e) {
	case DOCA_SUCCESS: return "DOCA_SUCCESS";
	case DOCA_ERROR_NOT_SUPPORTED: return "DOCA_ERROR_NOT_SUPPORTED";
	case DOCA_ERROR_NOT_FOUND: return "DOCA_ERROR_NOT_FOUND";
	case DOCA_ERROR_BAD_STATE: return "DOCA_ERROR_BAD_STATE";
	case DOCA_ERROR_IN_PROGRESS: return "DOCA_ERROR_IN_PROGRESS";
	default: return "DOCA_ERROR";
	}
}
const char *doca_error_get_descr(doca_error_t e)
{
	switch (e) {
	case DOCA_SUCCESS: return "Success";
	case DOCA_ERROR_NOT_SUPPORTED: return "Operation not supported";
	case DOCA_ERROR_NOT_FOUND: return "Resource Not Found";
	case DOCA_ERROR_BAD_STATE: return "Bad State";
	case DOCA_ERROR_DRIVER: return "DOCA Driver call failure";
	case DOCA_ERROR_IO_FAILED: return "Input/Output Operation Failed";
	case DOCA_ERROR_INVALID_VALUE: return "Invalid input";
	case DOCA_ERROR_NO_MEMORY: return "Memory allocation failure";
	case DOCA_ERROR_IN_PROGRESS: return "Operation is in progress";
	case DOCA_ERROR_TOO_BIG: return "Requested operation too big to be contained";
	default: return "Unknown error";
	}
}

doca_error_t doca_devinfo_create_list(struct doca_devinfo ***list, uint32_t *n)
{
	LOCK();
	struct doca_devinfo **l = calloc(fk.ndevs + 1, sizeof(*l));
	atomic_fetch_add(&live, 1);
	for (int i = 0; i < fk.ndevs; i++) {
		l[i] = NEW(struct doca_devinfo);
		*l[i] = fk.devs[i];
	}
	*list = l;
	*n = fk.ndevs;
	UNLOCK();
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **list)
{
	for (int i = 0; list[i]; i++) DEL(list[i]);
	DEL(list);
	return DOCA_SUCCESS;
}

static const char *no_domain(const char *p) { return strlen(p) == 12 && p[4] == ':' ? p + 5 : p; }

doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *d, const char *pci, uint8_t *eq)
{
	if (!d || !pci || !eq) return DOCA_ERROR_INVALID_VALUE;
	*eq = strcmp(no_domain(d->pci), no_domain(pci)) == 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_open(struct doca_devinfo *di, struct doca_dev **dev)
{
	if (di->open_fails) return DOCA_ERROR_DRIVER;
	*dev = NEW(struct doca_dev);
	(*dev)->info = *di;
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_close(struct doca_dev *dev)
{
	DEL(dev);
	return DOCA_SUCCESS;
}

/* ---- memory ---- */

doca_error_t doca_mmap_create(struct doca_mmap **m)
{
	*m = NEW(struct doca_mmap);
	LOCK();
	fk.st.mmaps++;
	UNLOCK();
	(*m)->access = DOCA_ACCESS_FLAG_LOCAL_READ_ONLY;
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_destroy(struct doca_mmap *m)
{
	DEL(m);
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_set_memrange(struct doca_mmap *m, void *addr, size_t len)
{
	if (m->started || !addr || !len) return DOCA_ERROR_BAD_STATE;
	m->addr = addr;
	m->len = len;
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_set_permissions(struct doca_mmap *m, uint32_t access)
{
	m->access = access;
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_add_dev(struct doca_mmap *m, struct doca_dev *dev)
{
	m->dev = dev;
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_start(struct doca_mmap *m)
{
	if (!m->addr || !m->dev) return DOCA_ERROR_BAD_STATE;
	m->started = 1;
	return DOCA_SUCCESS;
}
doca_error_t doca_mmap_stop(struct doca_mmap *m)
{
	m->started = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_create(size_t n, struct doca_buf_inventory **inv)
{
	*inv = NEW(struct doca_buf_inventory);
	(*inv)->cap = n;
	return DOCA_SUCCESS;
}
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inv)
{
	if (inv->used) return DOCA_ERROR_IN_USE;
	DEL(inv);
	return DOCA_SUCCESS;
}
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inv) { inv->started = 1; return DOCA_SUCCESS; }
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inv) { inv->started = 0; return DOCA_SUCCESS; }

doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inv, struct doca_mmap *m, void *addr,
						size_t len, void *data, size_t data_len, struct doca_buf **buf)
{
	uint8_t *a = addr, *d = data;
	if (!inv->started || !m->started) return DOCA_ERROR_BAD_STATE;
	if (a < m->addr || a + len > m->addr + m->len || d < a || d + data_len > a + len) return DOCA_ERROR_INVALID_VALUE;
	if (inv->used == inv->cap) return DOCA_ERROR_NO_MEMORY;
	struct doca_buf *b = NEW(struct doca_buf);
	*b = (struct doca_buf){.inv = inv, .mmap = m, .head = a, .data = d, .len = len, .data_len = data_len, .refs = 1};
	inv->used++;
	*buf = b;
	return DOCA_SUCCESS;
}
doca_error_t doca_buf_dec_refcount(struct doca_buf *b, uint16_t *refs)
{
	if (!b->refs) return DOCA_ERROR_BAD_STATE;
	if (refs) *refs = b->refs - 1;
	if (--b->refs == 0) {
		b->inv->used--;
		DEL(b);
	}
	return DOCA_SUCCESS;
}
doca_error_t doca_buf_get_data_len(const struct doca_buf *b, size_t *n)
{
	*n = b->data_len;
	return DOCA_SUCCESS;
}

/* ---- context, progress engine ---- */

static void set_state(struct doca_ctx *ctx, enum doca_ctx_states next)
{
	enum doca_ctx_states prev = ctx->state;
	ctx->state = next;
	if (ctx->state_cb && prev != next) ctx->state_cb(ctx->ud, ctx, prev, next);
}

doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **c)
{
	*c = NEW(struct doca_compress);
	(*c)->dev = dev;
	(*c)->ctx.c = *c;
	return DOCA_SUCCESS;
}
doca_error_t doca_compress_destroy(struct doca_compress *c)
{
	if (c->ctx.state != DOCA_CTX_STATE_IDLE) return DOCA_ERROR_BAD_STATE;
	if (c->ctx.pe) c->ctx.pe->ctx = NULL;
	DEL(c);
	return DOCA_SUCCESS;
}
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *c) { return &c->ctx; }
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *c, uint32_t *n)
{
	(void)c;
	*n = fk.max_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data ud) { ctx->ud = ud; return DOCA_SUCCESS; }
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb)
{
	ctx->state_cb = cb;
	return DOCA_SUCCESS;
}
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *st)
{
	*st = ctx->state;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	LOCK();
	doca_error_t err = DOCA_SUCCESS;
	if (ctx->state != DOCA_CTX_STATE_IDLE) err = DOCA_ERROR_BAD_STATE;
	else if (!ctx->pe || !ctx->c->conf[T_INFLATE].ok) err = DOCA_ERROR_INITIALIZATION;
	else {
		fk.st.ctx_starts++;
		set_state(ctx, DOCA_CTX_STATE_RUNNING);
	}
	UNLOCK();
	return err;
}

/* a stop with tasks in flight leaves them to the next progress to flush */
doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	LOCK();
	doca_error_t err = DOCA_SUCCESS;
	if (ctx->state != DOCA_CTX_STATE_RUNNING) err = DOCA_ERROR_BAD_STATE;
	else if (ctx->c->inflight) {
		set_state(ctx, DOCA_CTX_STATE_STOPPING);
		err = DOCA_ERROR_IN_PROGRESS;
	} else
		set_state(ctx, DOCA_CTX_STATE_IDLE);
	UNLOCK();
	return err;
}

doca_error_t doca_pe_create(struct doca_pe **pe)
{
	*pe = NEW(struct doca_pe);
	return DOCA_SUCCESS;
}
doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe->ctx) return DOCA_ERROR_IN_USE;
	DEL(pe);
	return DOCA_SUCCESS;
}
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (ctx->state != DOCA_CTX_STATE_IDLE) return DOCA_ERROR_BAD_STATE;
	pe->ctx = ctx;
	ctx->pe = pe;
	return DOCA_SUCCESS;
}

static void complete(struct doca_compress *c, struct doca_task *t)
{
	struct doca_task **p = &c->inflight;
	while (*p != t) p = &(*p)->next;
	*p = t->next;
	fk.inflight--;
	t->completed = 1;
	if (t->status == DOCA_SUCCESS) fk.st.done++;
	else fk.st.failed++;
	task_cb cb = t->status == DOCA_SUCCESS ? c->conf[t->kind].ok : c->conf[t->kind].err;
	cb(t, t->ud, c->ctx.ud);
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	LOCK();
	struct doca_ctx *ctx = pe->ctx;
	uint8_t did = 0;
	if (ctx && ctx->state == DOCA_CTX_STATE_RUNNING && fk.stop) {
		fk.stop = 0;
		set_state(ctx, DOCA_CTX_STATE_STOPPING);
		did = 1;
	}
	if (ctx && ctx->state == DOCA_CTX_STATE_STOPPING) {
		struct doca_compress *c = ctx->c;
		while (c->inflight) {
			c->inflight->status = DOCA_ERROR_IO_FAILED;
			fk.st.flushed++;
			complete(c, c->inflight);
		}
		set_state(ctx, DOCA_CTX_STATE_IDLE);
		UNLOCK();
		return 1;
	}
	if (ctx) {
		uint64_t now = now_ns();
		for (struct doca_task *t = ctx->c->inflight; t; t = t->next)
			if (!t->lost && t->due_ns <= now) {
				complete(ctx->c, t);
				did = 1;
				break; /* one completion per call, as the device reports them */
			}
	}
	UNLOCK();
	return did;
}

/* ---- tasks ---- */

static doca_error_t task_alloc(struct doca_compress *c, int kind, const struct doca_buf *src, struct doca_buf *dst,
			       union doca_data ud, struct doca_task **out)
{
	if (c->conf[kind].allocated >= c->conf[kind].num) return DOCA_ERROR_NO_MEMORY;
	struct doca_task *t = NEW(struct doca_task);
	*t = (struct doca_task){.kind = kind, .c = c, .src = src, .dst = dst, .ud = ud};
	c->conf[kind].allocated++;
	*out = t;
	return DOCA_SUCCESS;
}

void doca_task_free(struct doca_task *t)
{
	t->c->conf[t->kind].allocated--;
	DEL(t);
}

doca_error_t doca_task_get_status(const struct doca_task *t) { return t->status; }

static uint64_t max_buf(struct doca_devinfo *d, unsigned cap) { return d->caps & cap ? d->max_buf : 0; }

/* does the work now; the completion comes at a later progress */
static void run(struct doca_task *t)
{
	const struct doca_buf *s = t->src;
	struct doca_buf *d = t->dst;
	uint8_t *out = d->data + d->data_len;
	size_t room = d->len - (size_t)(d->data - d->head) - d->data_len;
	if (!(d->mmap->access & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)) {
		fk.st.bad_access++;
		t->status = DOCA_ERROR_NOT_PERMITTED;
		return;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	z.next_in = s->data;
	z.avail_in = s->data_len;
	z.next_out = out;
	z.avail_out = room;
	t->status = DOCA_ERROR_INVALID_VALUE;
	switch (t->kind) {
	case T_INFLATE:
		if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return;
		if (inflate(&z, Z_FINISH) == Z_STREAM_END) {
			d->data_len += z.total_out;
			t->adler = adler32(adler32(0, NULL, 0), out, z.total_out);
			t->status = DOCA_SUCCESS;
		}
		inflateEnd(&z);
		return;
	case T_DEFLATE:
		if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
		if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
			d->data_len += z.total_out;
			t->adler = adler32(adler32(0, NULL, 0), s->data, s->data_len);
			t->status = DOCA_SUCCESS;
		}
		deflateEnd(&z);
		return;
	case T_LZ4: {
		int n = LZ4_decompress_safe((const char *)s->data, (char *)out, (int)s->data_len, (int)room);
		if (n >= 0) {
			d->data_len += (size_t)n;
			t->status = DOCA_SUCCESS;
		}
		return;
	}
	}
}

doca_error_t doca_task_submit(struct doca_task *t)
{
	static const unsigned cap[T_KINDS] = {FAKEDOCA_CAP_DEFLATE, FAKEDOCA_CAP_INFLATE, FAKEDOCA_CAP_LZ4};
	LOCK();
	struct doca_compress *c = t->c;
	doca_error_t err = DOCA_SUCCESS;
	uint64_t max = max_buf(&c->dev->info, cap[t->kind]);
	if (c->ctx.state != DOCA_CTX_STATE_RUNNING) err = DOCA_ERROR_BAD_STATE;
	else if (t->submitted) err = DOCA_ERROR_IN_USE;
	else if (t->src->data_len > max || t->dst->len > max) {
		fk.st.oversize++;
		err = DOCA_ERROR_INVALID_VALUE;
	}
	if (err != DOCA_SUCCESS) {
		UNLOCK();
		return err;
	}
	t->submitted = 1;
	fk.st.tasks++;
	if (t->src->mmap->access & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) fk.st.src_writable++;
	if (fk.fail > 0) {
		fk.fail--;
		t->status = DOCA_ERROR_IO_FAILED;
	} else
		run(t);
	if (fk.lose > 0) {
		fk.lose--;
		t->lost = 1;
	}
	t->due_ns = now_ns() + (uint64_t)fk.delay_us * 1000u;
	t->next = c->inflight;
	c->inflight = t;
	if (++fk.inflight > fk.st.max_inflight) fk.st.max_inflight = fk.inflight;
	UNLOCK();
	return DOCA_SUCCESS;
}

/* ---- the three task types over the common task ---- */

#define FAKEDOCA_TASK_IMPL(kind, K, CAP)                                                                       \
	doca_error_t doca_compress_cap_task_##kind##_is_supported(const struct doca_devinfo *d)                \
	{                                                                                                      \
		return d->caps & CAP ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;                                \
	}                                                                                                      \
	doca_error_t doca_compress_cap_task_##kind##_get_max_buf_size(const struct doca_devinfo *d, uint64_t *n) \
	{                                                                                                      \
		if (!(d->caps & CAP)) return DOCA_ERROR_NOT_SUPPORTED;                                         \
		*n = d->max_buf;                                                                               \
		return DOCA_SUCCESS;                                                                           \
	}                                                                                                      \
	doca_error_t doca_compress_task_##kind##_set_conf(struct doca_compress *c,                             \
							  doca_compress_task_##kind##_completion_cb_t ok,      \
							  doca_compress_task_##kind##_completion_cb_t err,     \
							  uint32_t num)                                        \
	{                                                                                                      \
		if (!(c->dev->info.caps & CAP)) return DOCA_ERROR_NOT_SUPPORTED;                               \
		if (K == T_LZ4 && fk.lz4_conf_fails) return DOCA_ERROR_DRIVER;                                 \
		if (c->ctx.state != DOCA_CTX_STATE_IDLE || !ok || !err || num > fk.max_tasks)                  \
			return DOCA_ERROR_INVALID_VALUE;                                                       \
		c->conf[K].ok = (task_cb)ok;                                                                   \
		c->conf[K].err = (task_cb)err;                                                                 \
		c->conf[K].num = num;                                                                          \
		return DOCA_SUCCESS;                                                                           \
	}                                                                                                      \
	doca_error_t doca_compress_task_##kind##_alloc_init(struct doca_compress *c, struct doca_buf const *src, \
							    struct doca_buf *dst, union doca_data ud,          \
							    struct doca_compress_task_##kind **task)           \
	{                                                                                                      \
		return task_alloc(c, K, src, dst, ud, (struct doca_task **)task);                              \
	}                                                                                                      \
	struct doca_task *doca_compress_task_##kind##_as_task(struct doca_compress_task_##kind *task)          \
	{                                                                                                      \
		return &task->t;                                                                               \
	}

FAKEDOCA_TASK_IMPL(compress_deflate, T_DEFLATE, FAKEDOCA_CAP_DEFLATE)
FAKEDOCA_TASK_IMPL(decompress_deflate, T_INFLATE, FAKEDOCA_CAP_INFLATE)
FAKEDOCA_TASK_IMPL(decompress_lz4_block, T_LZ4, FAKEDOCA_CAP_LZ4)

/* reading the checksum of a task that did not succeed is a caller bug: abort */
static uint32_t checked_adler(const struct doca_task *t)
{
	if (!t->completed || t->status != DOCA_SUCCESS) abort();
	return t->adler;
}
uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *t)
{
	return checked_adler(&t->t);
}
uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *t)
{
	return checked_adler(&t->t);
}
