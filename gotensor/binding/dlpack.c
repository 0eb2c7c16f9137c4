//go:build cgo

#include <stdlib.h>
#include "dlpack.h"

enum { kDLCPU = 1, kDLUInt = 1 };

gtView *gt_freed_views;

static void gt_view_deleter(gtDLManagedTensor *self) {
	gtView *v = (gtView *)self;
	gtView *head = __atomic_load_n(&gt_freed_views, __ATOMIC_RELAXED);
	do {
		v->next = head;
	} while (!__atomic_compare_exchange_n(&gt_freed_views, &head, v, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void gt_run_deleter(gtView *v) { v->m.deleter(&v->m); }

gtView *gt_new_view(void *data, int64_t n, int64_t id) {
	gtView *v = calloc(1, sizeof *v);
	if (v == NULL) {
		return NULL;
	}
	v->shape[0] = n;
	v->id = id;
	v->m.dl_tensor.data = data;
	v->m.dl_tensor.device.device_type = kDLCPU;
	v->m.dl_tensor.ndim = 1;
	v->m.dl_tensor.dtype.code = kDLUInt;
	v->m.dl_tensor.dtype.bits = 8;
	v->m.dl_tensor.dtype.lanes = 1;
	v->m.dl_tensor.shape = v->shape;
	v->m.manager_ctx = v;
	v->m.deleter = gt_view_deleter;
	return v;
}

// The CUDA runtime's cudaHostRegister and cudaHostUnregister, called
// through the addresses Python found in the runtime torch loaded.
int gt_call_register(uintptr_t fn, void *p, size_t n, unsigned int flags) {
	return ((int (*)(void *, size_t, unsigned int))fn)(p, n, flags);
}

int gt_call_unregister(uintptr_t fn, void *p) {
	return ((int (*)(void *))fn)(p);
}
