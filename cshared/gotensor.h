/*
 * gotensor C ABI: libgotensor.so, built by `make cshared` from this folder.
 *
 * Stores are opened from a URL ("mem://", "file:///dir", a memory node
 * "tcp://host:port" or "ucx://host:port", several nodes as
 * "tcp://a:7707,b:7707") and named by an opaque handle. Tensors are passed as caller-owned memory (pointer + byte
 * count); gotensor never keeps a pointer past the call and never hands out
 * memory the caller must free. Every function returns GT_OK or an error code;
 * gt_last_error() then describes the error of the calling thread.
 *
 * Thread safety: every function may be called from any thread concurrently.
 */
#ifndef GOTENSOR_H
#define GOTENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GT_ABI_VERSION 1
#define GT_MAX_DIMS 32

/* Return codes. Values 1..10 are the Go core's error kinds (errs.Kind + 1). */
typedef enum gt_status {
    GT_OK = 0,
    GT_ERR_INTERNAL = 1,          /* a bug, including a recovered Go panic */
    GT_ERR_INVALID_ARGUMENT = 2,  /* bad key, dtype, shape, URL, codec, handle or NULL pointer */
    GT_ERR_KEY_NOT_FOUND = 3,
    GT_ERR_CORRUPT_DATA = 4,      /* stored bytes fail checksums or do not parse */
    GT_ERR_STORE_FULL = 5,        /* nothing was evicted */
    GT_ERR_CLOSED = 6,
    GT_ERR_UNAVAILABLE = 7,       /* I/O error, dead server, directory in use */
    GT_ERR_UNAUTHORIZED = 8,
    GT_ERR_TIMEOUT = 9,
    GT_ERR_UNSUPPORTED = 10,
    GT_ERR_BUFFER_TOO_SMALL = 11  /* gt_read_tensor: info holds the size needed */
} gt_status;

/* Element types; the numbers are stored in frames and never change. */
typedef enum gt_dtype {
    GT_BOOL = 1, GT_UINT8 = 2, GT_INT8 = 3, GT_INT16 = 4, GT_INT32 = 5, GT_INT64 = 6,
    GT_UINT16 = 7, GT_UINT32 = 8, GT_UINT64 = 9, GT_FLOAT16 = 10, GT_BFLOAT16 = 11,
    GT_FLOAT32 = 12, GT_FLOAT64 = 13, GT_COMPLEX64 = 14, GT_COMPLEX128 = 15,
    GT_FLOAT8_E4M3FN = 16, GT_FLOAT8_E5M2 = 17, GT_FLOAT8_E4M3FNUZ = 18,
    GT_FLOAT8_E5M2FNUZ = 19, GT_FLOAT8_E8M0FNU = 20
} gt_dtype;

typedef int64_t gt_store;

/* What a stored tensor is, read from its header. */
typedef struct gt_tensor_info {
    int32_t dtype;                 /* a gt_dtype */
    int32_t ndim;
    int64_t shape[GT_MAX_DIMS];
    uint64_t raw_bytes;            /* bytes of the decoded tensor */
    uint64_t stored_bytes;         /* bytes the store holds for it */
    char codec[32];                /* NUL-terminated codec name */
} gt_tensor_info;

/* What a store handle did since gt_open or gt_reset_stats (gt_store_stats).
 * Calls are counted failed ones included; bytes and seconds only for calls
 * that succeeded. Raw bytes are the tensors', stored bytes the frames', wire
 * bytes what moved to or from the store. Seconds are summed over calls
 * (concurrent calls can add up to more than the time that passed). */
typedef struct gt_stats {
    uint64_t writes, reads, stats, deletes, exists, lists; /* calls by kind */
    uint64_t errors;                                       /* calls that failed */
    uint64_t raw_bytes_written, stored_bytes_written, wire_bytes_out;
    uint64_t raw_bytes_read, stored_bytes_read, wire_bytes_in;
    double encode_seconds, decode_seconds, move_seconds;   /* move: waiting on the store */
    double write_seconds, read_seconds;                    /* end to end */
    double ratio;                                          /* raw / stored written; 0 before a write */
    double write_gbps, read_gbps;                          /* raw bytes per second, 1e9 */
    double link_bytes_per_second, link_latency_seconds;    /* the "auto" codec's view of the link */
} gt_stats;

/* GT_ABI_VERSION of the library; compare with the header's. */
int gt_abi_version(void);

/* Opens a store; *store receives its handle. */
int gt_open(const char *url, gt_store *store);

/* Closes a store; the handle becomes invalid. */
int gt_close(gt_store store);

/* Encodes nbytes at data (a contiguous tensor of dtype and shape) with codec
 * ("none", or NULL for the default) and stores it under key. */
int gt_write_tensor(gt_store store, const char *key, const void *data, size_t nbytes,
                    int dtype, const int64_t *shape, int ndim, const char *codec);

/* Decodes the tensor under key into buf. If buf_size is smaller than the
 * tensor, returns GT_ERR_BUFFER_TOO_SMALL and leaves buf untouched. info may be
 * NULL; otherwise it is filled whenever the key exists (also when too small). */
int gt_read_tensor(gt_store store, const char *key, void *buf, size_t buf_size, gt_tensor_info *info);

/* Writes nbytes at data, a contiguous tensor of dtype and shape, as rows
 * [start, start + shape[0]) of the leading dimension of the tensor under key,
 * which must exist with that dtype and the same trailing dimensions
 * (GT_ERR_INVALID_ARGUMENT otherwise, or for rows out of range). Only the
 * chunks the rows touch are encoded again. */
int gt_write_rows(gt_store store, const char *key, int64_t start, const void *data, size_t nbytes,
                  int dtype, const int64_t *shape, int ndim);

/* gt_write_tensor laying the tensor (2 or more dimensions) out in chunks of
 * chunk_rows rows of its leading dimension (at least 4 KiB), for later
 * gt_write_rows of about that many rows: a KV cache appended a row at a time
 * takes chunk_rows 1. chunk_rows <= 0 keeps the store's chunking. */
int gt_write_for_rows(gt_store store, const char *key, const void *data, size_t nbytes, int dtype,
                      const int64_t *shape, int ndim, const char *codec, int64_t chunk_rows);

/* Decodes rows [start, start + shape[0]) of the tensor under key into buf
 * (nbytes, exactly the rows' size); dtype and shape are the rows'. Only the
 * chunks that cover them are read and decoded. */
int gt_read_rows(gt_store store, const char *key, int64_t start, void *buf, size_t nbytes,
                 int dtype, const int64_t *shape, int ndim);

/* Describes the tensor under key without decoding it. */
int gt_stat(gt_store store, const char *key, gt_tensor_info *info);

int gt_delete(gt_store store, const char *key);

/* 1 if key exists, 0 if not, or a negated error code. */
int gt_exists(gt_store store, const char *key);

/* Fills *out with what the store handle did (see gt_stats). */
int gt_store_stats(gt_store store, gt_stats *out);

/* Zeroes the counts gt_store_stats reports (the link estimate is kept). */
int gt_reset_stats(gt_store store);

/* The message of the calling thread's last error ("" if none). Valid until the
 * thread's next gotensor call. */
const char *gt_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* GOTENSOR_H */
