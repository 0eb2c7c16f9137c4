//go:build doca

// The DOCA engine offloads raw DEFLATE and LZ4 block decompression to a
// BlueField's compression engine through DOCA Compress (BlueField-2:
// deflate; BlueField-3: deflate and LZ4). Build with -tags doca on a host
// or DPU with the DOCA SDK (pkg-config doca-compress); set GOTENSOR_DOCA_PCI
// to the device's PCI address (e.g. 03:00.0) to enable it. Any task the
// device refuses or fails is redone in software, as DOCA's own samples do.
//
// Written against the public DOCA 2.x API (doca_compress.h, doca_pe.h,
// doca_mmap.h, doca_buf_inventory.h); it has not been compiled or run on
// BlueField hardware by this project.
package engine

/*
#cgo pkg-config: doca-compress doca-common
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

typedef struct {
	struct doca_dev *dev;
	struct doca_compress *compress;
	struct doca_pe *pe;
	struct doca_buf_inventory *inv;
	int lz4;
} gt_doca;

typedef struct { int done; doca_error_t status; uint32_t adler; } gt_result;

static void inflate_done(struct doca_compress_task_decompress_deflate *t, union doca_data ud, union doca_data cd) {
	gt_result *r = ud.ptr;
	r->adler = doca_compress_task_decompress_deflate_get_adler_cs(t);
	r->status = doca_task_get_status(doca_compress_task_decompress_deflate_as_task(t));
	r->done = 1;
}

static void lz4_done(struct doca_compress_task_decompress_lz4_block *t, union doca_data ud, union doca_data cd) {
	gt_result *r = ud.ptr;
	r->status = doca_task_get_status(doca_compress_task_decompress_lz4_block_as_task(t));
	r->done = 1;
}

static doca_error_t gt_doca_open(const char *pci, gt_doca *g) {
	struct doca_devinfo **list;
	uint32_t n;
	doca_error_t err = doca_devinfo_create_list(&list, &n);
	if (err != DOCA_SUCCESS) return err;
	err = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t same = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &same) != DOCA_SUCCESS || !same) continue;
		if (doca_compress_cap_task_decompress_deflate_is_supported(list[i]) != DOCA_SUCCESS) continue;
		g->lz4 = doca_compress_cap_task_decompress_lz4_block_is_supported(list[i]) == DOCA_SUCCESS;
		err = doca_dev_open(list[i], &g->dev);
		break;
	}
	doca_devinfo_destroy_list(list);
	if (err != DOCA_SUCCESS) return err;
	if ((err = doca_compress_create(g->dev, &g->compress)) != DOCA_SUCCESS) return err;
	if ((err = doca_pe_create(&g->pe)) != DOCA_SUCCESS) return err;
	if ((err = doca_compress_task_decompress_deflate_set_conf(g->compress, inflate_done, inflate_done, 1)) != DOCA_SUCCESS) return err;
	if (g->lz4 && (err = doca_compress_task_decompress_lz4_block_set_conf(g->compress, lz4_done, lz4_done, 1)) != DOCA_SUCCESS) return err;
	if ((err = doca_pe_connect_ctx(g->pe, doca_compress_as_ctx(g->compress))) != DOCA_SUCCESS) return err;
	if ((err = doca_ctx_start(doca_compress_as_ctx(g->compress))) != DOCA_SUCCESS) return err;
	if ((err = doca_buf_inventory_create(2, &g->inv)) != DOCA_SUCCESS) return err;
	return doca_buf_inventory_start(g->inv);
}

static doca_error_t map(gt_doca *g, void *addr, size_t len, struct doca_mmap **m) {
	doca_error_t err = doca_mmap_create(m);
	if (err != DOCA_SUCCESS) return err;
	if ((err = doca_mmap_set_memrange(*m, addr, len)) != DOCA_SUCCESS ||
	    (err = doca_mmap_set_permissions(*m, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)) != DOCA_SUCCESS ||
	    (err = doca_mmap_add_dev(*m, g->dev)) != DOCA_SUCCESS ||
	    (err = doca_mmap_start(*m)) != DOCA_SUCCESS) {
		doca_mmap_destroy(*m);
		*m = NULL;
	}
	return err;
}

// gt_doca_run decompresses src into dst with one task (lz4 != 0: LZ4
// block, else raw DEFLATE), waiting for it. *outlen is the decoded length.
static doca_error_t gt_doca_run(gt_doca *g, int lz4, void *src, size_t srclen, void *dst, size_t dstlen,
				size_t *outlen, uint32_t *adler) {
	struct doca_mmap *ms = NULL, *md = NULL;
	struct doca_buf *bs = NULL, *bd = NULL;
	gt_result r = {0};
	union doca_data ud = {.ptr = &r};
	doca_error_t err;
	if ((err = map(g, src, srclen, &ms)) != DOCA_SUCCESS) goto out;
	if ((err = map(g, dst, dstlen, &md)) != DOCA_SUCCESS) goto out;
	if ((err = doca_buf_inventory_buf_get_by_data(g->inv, ms, src, srclen, &bs)) != DOCA_SUCCESS) goto out;
	if ((err = doca_buf_inventory_buf_get_by_addr(g->inv, md, dst, dstlen, &bd)) != DOCA_SUCCESS) goto out;
	struct doca_task *task;
	if (lz4) {
		struct doca_compress_task_decompress_lz4_block *t;
		if ((err = doca_compress_task_decompress_lz4_block_alloc_init(g->compress, bs, bd, ud, &t)) != DOCA_SUCCESS) goto out;
		task = doca_compress_task_decompress_lz4_block_as_task(t);
	} else {
		struct doca_compress_task_decompress_deflate *t;
		if ((err = doca_compress_task_decompress_deflate_alloc_init(g->compress, bs, bd, ud, &t)) != DOCA_SUCCESS) goto out;
		task = doca_compress_task_decompress_deflate_as_task(t);
	}
	if ((err = doca_task_submit(task)) == DOCA_SUCCESS) {
		while (!r.done) doca_pe_progress(g->pe);
		err = r.status;
	}
	doca_task_free(task);
	if (err == DOCA_SUCCESS) {
		err = doca_buf_get_data_len(bd, outlen);
		*adler = r.adler;
	}
out:
	if (bs) doca_buf_dec_refcount(bs, NULL);
	if (bd) doca_buf_dec_refcount(bd, NULL);
	if (ms) doca_mmap_destroy(ms);
	if (md) doca_mmap_destroy(md);
	return err;
}
*/
import "C"

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DOCA offloads to a BlueField, one task at a time, falling back to
// software whenever the device cannot do a task.
type DOCA struct {
	mu        sync.Mutex
	g         C.gt_doca
	Fallbacks atomic.Int64 // tasks redone in software
}

func init() {
	docaBuilt = true
	if pci := os.Getenv("GOTENSOR_DOCA_PCI"); pci != "" {
		if d, err := OpenDOCA(pci); err == nil {
			Use(d)
		}
	}
}

// OpenDOCA opens the BlueField compression device at a PCI address.
func OpenDOCA(pci string) (*DOCA, error) {
	d := &DOCA{}
	cs := C.CString(pci)
	defer C.free(unsafe.Pointer(cs))
	if err := C.gt_doca_open(cs, &d.g); err != C.DOCA_SUCCESS {
		return nil, corrupt("DOCA: opening %s: %s", pci, C.GoString(C.doca_error_get_descr(err)))
	}
	return d, nil
}

func (d *DOCA) Name() string { return "doca" }

func (d *DOCA) run(lz4 bool, dst, src []byte) (uint32, bool) {
	if len(dst) == 0 || len(src) == 0 || (lz4 && d.g.lz4 == 0) {
		return 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var n C.size_t
	var adler C.uint32_t
	flag := C.int(0)
	if lz4 {
		flag = 1
	}
	err := C.gt_doca_run(&d.g, flag, unsafe.Pointer(&src[0]), C.size_t(len(src)),
		unsafe.Pointer(&dst[0]), C.size_t(len(dst)), &n, &adler)
	return uint32(adler), err == C.DOCA_SUCCESS && int(n) == len(dst)
}

func (d *DOCA) Inflate(dst, src []byte) (uint32, error) {
	if sum, ok := d.run(false, dst, src); ok {
		return sum, nil
	}
	d.Fallbacks.Add(1)
	return Software{}.Inflate(dst, src)
}

func (d *DOCA) LZ4Block(dst, src []byte) error {
	if _, ok := d.run(true, dst, src); ok {
		return nil
	}
	d.Fallbacks.Add(1)
	return Software{}.LZ4Block(dst, src)
}
