// C tests of libgotensor: round trips, every error path, per-thread errors.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotensor.h"

static int failures, checks;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, " (last error: %s)\n", gt_last_error());       \
        }                                                                  \
    } while (0)

#define EXPECT_RC(call, want) \
    do { int rc_ = (call); CHECK(rc_ == (want), "%s returned %d, want %d", #call, rc_, (want)); } while (0)

static void round_trips(const char *url) {
    gt_store s;
    EXPECT_RC(gt_open(url, &s), GT_OK);
    // several dtypes and shapes, including 0-d and empty
    struct { int dtype; int elem; int ndim; int64_t shape[3]; } cases[] = {
        {GT_FLOAT32, 4, 2, {3, 5}}, {GT_BFLOAT16, 2, 1, {1000}}, {GT_INT64, 8, 0, {0}},
        {GT_UINT8, 1, 2, {0, 4}}, {GT_COMPLEX128, 16, 3, {2, 2, 2}}, {GT_FLOAT8_E4M3FN, 1, 1, {77}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].elem;
        for (int d = 0; d < cases[c].ndim; d++) n *= cases[c].shape[d];
        unsigned char *in = malloc(n + 1), *out = malloc(n + 16);
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(i * 31 + c);
        char key[32];
        snprintf(key, sizeof key, "case/%zu", c);
        EXPECT_RC(gt_write_tensor(s, key, in, n, cases[c].dtype, cases[c].shape, cases[c].ndim, NULL), GT_OK);
        gt_tensor_info info;
        memset(out, 0xAB, n + 16);
        EXPECT_RC(gt_read_tensor(s, key, out, n + 16, &info), GT_OK);  // a larger buffer is fine
        CHECK(memcmp(in, out, n) == 0, "case %zu: bytes differ", c);
        CHECK(out[n] == 0xAB, "case %zu: wrote past the tensor", c);
        CHECK(info.dtype == cases[c].dtype && info.ndim == cases[c].ndim && info.raw_bytes == n,
              "case %zu: info dtype %d ndim %d raw %llu", c, info.dtype, info.ndim, (unsigned long long)info.raw_bytes);
        for (int d = 0; d < cases[c].ndim; d++) CHECK(info.shape[d] == cases[c].shape[d], "case %zu dim %d", c, d);
        CHECK(strcmp(info.codec, "none") == 0, "codec %s", info.codec);
        EXPECT_RC(gt_stat(s, key, &info), GT_OK);
        CHECK(info.stored_bytes > n, "stored %llu", (unsigned long long)info.stored_bytes);
        EXPECT_RC(gt_exists(s, key), 1);
        free(in);
        free(out);
    }
    EXPECT_RC(gt_delete(s, "case/0"), GT_OK);
    EXPECT_RC(gt_exists(s, "case/0"), 0);
    EXPECT_RC(gt_close(s), GT_OK);
}

// rows written by gt_write_rows read back by gt_read_rows and whole; bad
// ranges and trailing shapes are InvalidArgument
static void row_ranges(const char *url) {
    gt_store s;
    EXPECT_RC(gt_open(url, &s), GT_OK);
    float t[40][3], rows[5][3], back[5][3];
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 3; j++) t[i][j] = (float)(i * 3 + j);
    int64_t shape[2] = {40, 3}, rshape[2] = {5, 3}, bad[2] = {5, 4};
    EXPECT_RC(gt_write_tensor(s, "rows", t, sizeof t, GT_FLOAT32, shape, 2, "lz4"), GT_OK);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) rows[i][j] = t[10 + i][j] = -(float)(i + j);
    EXPECT_RC(gt_write_rows(s, "rows", 10, rows, sizeof rows, GT_FLOAT32, rshape, 2), GT_OK);
    EXPECT_RC(gt_read_rows(s, "rows", 10, back, sizeof back, GT_FLOAT32, rshape, 2), GT_OK);
    CHECK(memcmp(rows, back, sizeof rows) == 0, "rows read back");
    float whole[40][3];
    EXPECT_RC(gt_read_tensor(s, "rows", whole, sizeof whole, NULL), GT_OK);
    CHECK(memcmp(whole, t, sizeof t) == 0, "tensor after the row write");
    EXPECT_RC(gt_write_rows(s, "rows", 36, rows, sizeof rows, GT_FLOAT32, rshape, 2), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_read_rows(s, "rows", -1, back, sizeof back, GT_FLOAT32, rshape, 2), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_rows(s, "rows", 0, rows, sizeof rows, GT_FLOAT32, bad, 2), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_read_rows(s, "rows", 0, back, sizeof back, GT_INT32, rshape, 2), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_read_rows(s, "nope", 0, back, sizeof back, GT_FLOAT32, rshape, 2), GT_ERR_KEY_NOT_FOUND);
    // laid out a row per chunk (1 KiB rows: chunks of 4), then rows written and read across chunks
    static float kv[64][256];
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 256; j++) kv[i][j] = (float)(i * 256 + j);
    int64_t kshape[2] = {64, 256}, one[2] = {1, 256};
    EXPECT_RC(gt_write_for_rows(s, "kv", kv, sizeof kv, GT_FLOAT32, kshape, 2, "none", 1), GT_OK);
    float row[256];
    for (int j = 0; j < 256; j++) row[j] = kv[9][j] = -1.0f;
    EXPECT_RC(gt_write_rows(s, "kv", 9, row, sizeof row, GT_FLOAT32, one, 2), GT_OK);
    static float kback[64][256];
    EXPECT_RC(gt_read_tensor(s, "kv", kback, sizeof kback, NULL), GT_OK);
    CHECK(memcmp(kback, kv, sizeof kv) == 0, "chunk-rows tensor after a row write");
    EXPECT_RC(gt_close(s), GT_OK);
}

static void error_paths(const char *dir) {
    gt_store s;
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t shape[1] = {4};

    EXPECT_RC(gt_open("nope://x", &s), GT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(gt_last_error(), "unknown store scheme") != NULL, "message: %s", gt_last_error());
    EXPECT_RC(gt_open(NULL, &s), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_open("mem://", NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_open("tcp://127.0.0.1:1", &s), GT_ERR_UNAVAILABLE);  /* no memory node there */

    EXPECT_RC(gt_open("mem://?capacity=200", &s), GT_OK);
    CHECK(gt_last_error()[0] == 0, "success clears the error: %s", gt_last_error());
    EXPECT_RC(gt_read_tensor(s, "missing", y, sizeof y, NULL), GT_ERR_KEY_NOT_FOUND);
    EXPECT_RC(gt_delete(s, "missing"), GT_ERR_KEY_NOT_FOUND);
    EXPECT_RC(gt_write_tensor(s, NULL, x, sizeof x, GT_FLOAT32, shape, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "", x, sizeof x, GT_FLOAT32, shape, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x, 99, shape, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x, GT_FLOAT32, shape, 1, "zip"), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x - 1, GT_FLOAT32, shape, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", NULL, sizeof x, GT_FLOAT32, shape, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x, GT_FLOAT32, NULL, 1, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x, GT_FLOAT32, shape, 33, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_write_tensor(s, "k", x, sizeof x, GT_FLOAT32, shape, 1, NULL), GT_OK);

    // too small a buffer: refused, buffer untouched, info says what is needed
    gt_tensor_info info;
    float small[3] = {-1, -1, -1};
    EXPECT_RC(gt_read_tensor(s, "k", small, sizeof small, &info), GT_ERR_BUFFER_TOO_SMALL);
    CHECK(info.raw_bytes == sizeof x && small[0] == -1, "raw %llu", (unsigned long long)info.raw_bytes);
    CHECK(strstr(gt_last_error(), "too small") != NULL, "message: %s", gt_last_error());
    EXPECT_RC(gt_read_tensor(s, "k", NULL, sizeof y, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_stat(s, "k", NULL), GT_ERR_INVALID_ARGUMENT);

    // store full: nothing lost
    float big[64] = {0};
    int64_t bshape[1] = {64};
    EXPECT_RC(gt_write_tensor(s, "big", big, sizeof big, GT_FLOAT32, bshape, 1, NULL), GT_ERR_STORE_FULL);
    EXPECT_RC(gt_read_tensor(s, "k", y, sizeof y, NULL), GT_OK);
    CHECK(memcmp(x, y, sizeof x) == 0, "existing tensor intact");

    EXPECT_RC(gt_close(s), GT_OK);
    EXPECT_RC(gt_close(s), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_read_tensor(s, "k", y, sizeof y, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_exists(s, "k"), -GT_ERR_INVALID_ARGUMENT);

    // corrupt data on disk
    char url[512], path[600];
    snprintf(url, sizeof url, "file://%s/corrupt", dir);
    EXPECT_RC(gt_open(url, &s), GT_OK);
    EXPECT_RC(gt_write_tensor(s, "w", x, sizeof x, GT_FLOAT32, shape, 1, NULL), GT_OK);
    gt_store other;
    EXPECT_RC(gt_open(url, &other), GT_ERR_UNAVAILABLE);  // one owner per directory
    EXPECT_RC(gt_close(s), GT_OK);
    snprintf(path, sizeof path, "%s/corrupt/w.gtf", dir);
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL, "open %s", path);
    if (f) {
        fseek(f, -2, SEEK_END);
        fputc(0x5A, f);
        fclose(f);
    }
    EXPECT_RC(gt_open(url, &s), GT_OK);
    EXPECT_RC(gt_read_tensor(s, "w", y, sizeof y, NULL), GT_ERR_CORRUPT_DATA);
    CHECK(strstr(gt_last_error(), "checksum") != NULL, "message: %s", gt_last_error());
    EXPECT_RC(gt_close(s), GT_OK);
}

// Each thread sees its own last error.
static void *thread_errors(void *arg) {
    long id = (long)arg;
    gt_store s;
    char key[32], want[64];
    snprintf(key, sizeof key, "thread-%ld-missing", id);
    snprintf(want, sizeof want, "\"%s\"", key);
    gt_open("mem://", &s);
    for (int i = 0; i < 200; i++) {
        float y[1];
        if (gt_read_tensor(s, key, y, sizeof y, NULL) != GT_ERR_KEY_NOT_FOUND || !strstr(gt_last_error(), want))
            return (void *)1;
    }
    gt_close(s);
    return NULL;
}

// The counts after known operations: two writes, a read, a failed read, a
// stat, an exists, a delete; then a reset.
static void store_stats(void) {
    gt_store s;
    EXPECT_RC(gt_open("mem://stats", &s), GT_OK);
    float w[256];
    for (int i = 0; i < 256; i++) w[i] = (float)i / 7.0f;
    int64_t shape[1] = {256};
    EXPECT_RC(gt_write_tensor(s, "a", w, sizeof w, GT_FLOAT32, shape, 1, "none"), GT_OK);
    EXPECT_RC(gt_write_tensor(s, "b", w, sizeof w, GT_FLOAT32, shape, 1, "planes"), GT_OK);
    gt_tensor_info ia, ib;
    EXPECT_RC(gt_read_tensor(s, "a", w, sizeof w, &ia), GT_OK);
    EXPECT_RC(gt_read_tensor(s, "missing", w, sizeof w, NULL), GT_ERR_KEY_NOT_FOUND);
    EXPECT_RC(gt_stat(s, "b", &ib), GT_OK);
    EXPECT_RC(gt_exists(s, "a"), 1);
    EXPECT_RC(gt_delete(s, "a"), GT_OK);
    gt_stats st;
    EXPECT_RC(gt_store_stats(s, NULL), GT_ERR_INVALID_ARGUMENT);
    EXPECT_RC(gt_store_stats(s, &st), GT_OK);
    CHECK(st.writes == 2 && st.reads == 2 && st.stats == 1 && st.exists == 1 && st.deletes == 1 && st.lists == 0,
          "ops w%llu r%llu s%llu e%llu d%llu", (unsigned long long)st.writes, (unsigned long long)st.reads,
          (unsigned long long)st.stats, (unsigned long long)st.exists, (unsigned long long)st.deletes);
    CHECK(st.errors == 1, "errors %llu", (unsigned long long)st.errors);
    CHECK(st.raw_bytes_written == 2 * sizeof w && st.raw_bytes_read == sizeof w, "raw %llu %llu",
          (unsigned long long)st.raw_bytes_written, (unsigned long long)st.raw_bytes_read);
    CHECK(st.stored_bytes_written == ia.stored_bytes + ib.stored_bytes && st.wire_bytes_out == st.stored_bytes_written,
          "stored %llu", (unsigned long long)st.stored_bytes_written);
    CHECK(st.stored_bytes_read == ia.stored_bytes && st.wire_bytes_in == ia.stored_bytes, "read stored %llu",
          (unsigned long long)st.stored_bytes_read);
    CHECK(st.ratio > 0 && st.ratio == (double)st.raw_bytes_written / (double)st.stored_bytes_written, "ratio %f", st.ratio);
    CHECK(st.link_bytes_per_second > 0, "link %f", st.link_bytes_per_second);
    EXPECT_RC(gt_reset_stats(s), GT_OK);
    EXPECT_RC(gt_store_stats(s, &st), GT_OK);
    CHECK(st.writes == 0 && st.raw_bytes_written == 0 && st.ratio == 0, "after reset: %llu writes",
          (unsigned long long)st.writes);
    EXPECT_RC(gt_close(s), GT_OK);
    EXPECT_RC(gt_store_stats(s, &st), GT_ERR_INVALID_ARGUMENT);
}

int main(void) {
    CHECK(gt_abi_version() == GT_ABI_VERSION, "abi %d", gt_abi_version());
    char dir[] = "/tmp/gt_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char url[600];
    round_trips("mem://");
    row_ranges("mem://");
    snprintf(url, sizeof url, "file://%s/rt", dir);
    round_trips(url);
    row_ranges(url);
    error_paths(dir);
    store_stats();
    pthread_t th[4];
    for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_errors, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        CHECK(r == NULL, "thread %d saw another thread's error", i);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures != 0;
}
