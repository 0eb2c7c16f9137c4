/*
 * gotensor's own declarations of the subset of the NVIDIA DOCA 2.x API its
 * DOCA engine uses (names and signatures as in DOCA's doca_*.h), for the
 * software fake in ../fakedoca.c. Every standard header name in this
 * directory includes this file. The version is 2.7, the first with the LZ4
 * block task, so fake builds compile the engine's LZ4 path.
 */
#ifndef FAKEDOCA_DECLS_H_
#define FAKEDOCA_DECLS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_VERSION_MAJOR 2
#define DOCA_VERSION_MINOR 7
#define DOCA_VERSION_PATCH 0
#define DOCA_VERSION_STRING "2.7.0-gotensor-fake"

typedef enum doca_error {
	DOCA_SUCCESS = 0,
	DOCA_ERROR_UNKNOWN = 1,
	DOCA_ERROR_NOT_PERMITTED = 2,
	DOCA_ERROR_IN_USE = 3,
	DOCA_ERROR_NOT_SUPPORTED = 4,
	DOCA_ERROR_AGAIN = 5,
	DOCA_ERROR_INVALID_VALUE = 6,
	DOCA_ERROR_NO_MEMORY = 7,
	DOCA_ERROR_INITIALIZATION = 8,
	DOCA_ERROR_TIME_OUT = 9,
	DOCA_ERROR_SHUTDOWN = 10,
	DOCA_ERROR_NOT_FOUND = 16,
	DOCA_ERROR_IO_FAILED = 17,
	DOCA_ERROR_BAD_STATE = 18,
	DOCA_ERROR_DRIVER = 21,
	DOCA_ERROR_FULL = 24,
	DOCA_ERROR_IN_PROGRESS = 26,
	DOCA_ERROR_TOO_BIG = 27,
} doca_error_t;

const char *doca_error_get_name(doca_error_t error);
const char *doca_error_get_descr(doca_error_t error);

union doca_data {
	void *ptr;
	uint64_t u64;
};

enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = (1 << 0),
};

/* doca_dev.h */
struct doca_devinfo;
struct doca_dev;
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
					    uint8_t *is_equal);
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);
doca_error_t doca_dev_close(struct doca_dev *dev);

/* doca_buf.h, doca_mmap.h, doca_buf_inventory.h */
struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);
doca_error_t doca_mmap_create(struct doca_mmap **mmap);
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);
doca_error_t doca_mmap_start(struct doca_mmap *mmap);
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf);
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *addr, size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *data, size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

/* doca_ctx.h, doca_pe.h */
struct doca_ctx;
struct doca_pe;
struct doca_task;
enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,
	DOCA_CTX_STATE_STARTING = 1,
	DOCA_CTX_STATE_RUNNING = 2,
	DOCA_CTX_STATE_STOPPING = 3,
};
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data, struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state, enum doca_ctx_states next_state);
doca_error_t doca_ctx_start(struct doca_ctx *ctx);
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);
doca_error_t doca_pe_create(struct doca_pe **pe);
doca_error_t doca_pe_destroy(struct doca_pe *pe);
uint8_t doca_pe_progress(struct doca_pe *pe);
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);
doca_error_t doca_task_submit(struct doca_task *task);
void doca_task_free(struct doca_task *task);
doca_error_t doca_task_get_status(const struct doca_task *task);

/* doca_compress.h */
struct doca_compress;
doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress);
doca_error_t doca_compress_destroy(struct doca_compress *compress);
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress);
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks);

#define FAKEDOCA_TASK_DECLS(kind)                                                                              \
	struct doca_compress_task_##kind;                                                                      \
	typedef void (*doca_compress_task_##kind##_completion_cb_t)(struct doca_compress_task_##kind * task,   \
								    union doca_data task_user_data,            \
								    union doca_data ctx_user_data);            \
	doca_error_t doca_compress_cap_task_##kind##_is_supported(const struct doca_devinfo *devinfo);         \
	doca_error_t doca_compress_cap_task_##kind##_get_max_buf_size(const struct doca_devinfo *devinfo,      \
								      uint64_t *max_buf_size);                 \
	doca_error_t doca_compress_task_##kind##_set_conf(struct doca_compress *compress,                      \
							  doca_compress_task_##kind##_completion_cb_t task_completion_cb, \
							  doca_compress_task_##kind##_completion_cb_t task_error_cb,      \
							  uint32_t num_tasks);                                 \
	doca_error_t doca_compress_task_##kind##_alloc_init(struct doca_compress *compress,                    \
							    struct doca_buf const *src_buff,                   \
							    struct doca_buf *dst_buff, union doca_data user_data, \
							    struct doca_compress_task_##kind **task);          \
	struct doca_task *doca_compress_task_##kind##_as_task(struct doca_compress_task_##kind *task);

FAKEDOCA_TASK_DECLS(compress_deflate)
FAKEDOCA_TASK_DECLS(decompress_deflate)
FAKEDOCA_TASK_DECLS(decompress_lz4_block)
uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task);
uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task);

#ifdef __cplusplus
}
#endif
#endif /* FAKEDOCA_DECLS_H_ */
