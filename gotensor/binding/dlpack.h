// DLPack's legacy managed tensor (dlpack.h v0.8, the "dltensor" capsule
// torch.from_dlpack takes), enough of it for gotensor's views.
#ifndef GOTENSOR_DLPACK_H
#define GOTENSOR_DLPACK_H
#include <stddef.h>
#include <stdint.h>

typedef struct { int32_t device_type; int32_t device_id; } gtDLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } gtDLDataType;
typedef struct {
	void *data;
	gtDLDevice device;
	int32_t ndim;
	gtDLDataType dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} gtDLTensor;
typedef struct gtDLManagedTensor {
	gtDLTensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct gtDLManagedTensor *self);
} gtDLManagedTensor;

// gtView is what a view hands Python: the managed tensor (a 1-d uint8
// tensor of the view's bytes), its shape, and the view's id in Go.
typedef struct gtView {
	gtDLManagedTensor m;
	int64_t shape[1];
	int64_t id;
	struct gtView *next; // in gt_freed_views
} gtView;

// gt_freed_views are the views whose tensors were freed, a lock-free stack
// the deleter pushes onto (no call into Go: each would wake the Go
// runtime's monitor thread beside the caller's compute) and Go takes whole
// (views_cgo.go's releaseFreed).
extern gtView *gt_freed_views;

gtView *gt_new_view(void *data, int64_t n, int64_t id);
void gt_run_deleter(gtView *v); // as torch does when it frees the tensor
int gt_call_register(uintptr_t fn, void *p, size_t n, unsigned int flags);
int gt_call_unregister(uintptr_t fn, void *p);
#endif
