// Command cshared builds libgotensor.so, gotensor's C ABI (gotensor.h).
// Every export converts its arguments, calls package binding and turns
// errors and panics into return codes; C never receives a Go pointer.
package main

/*
#include <stdlib.h>
#include "gotensor.h"
void gt_set_error(const char *msg, size_t n);
// const-qualified aliases so the exports match gotensor.h exactly: cgo
// compiles that header together with its own prototypes, so any drift
// between the two is a build error.
typedef const char gt_cchar;
typedef const void gt_cvoid;
typedef const int64_t gt_cint64;
*/
import "C"

import (
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

const errBufferTooSmall = 11

func main() {}

// status records err as the thread's last error and returns its code.
func status(err error) C.int {
	if err == nil {
		C.gt_set_error(nil, 0)
		return C.GT_OK
	}
	msg := err.Error()
	cs := C.CString(msg)
	C.gt_set_error(cs, C.size_t(len(msg)))
	C.free(unsafe.Pointer(cs))
	if e, ok := err.(*codeError); ok {
		return C.int(e.code)
	}
	return C.int(errs.KindOf(err)) + 1 // gotensor.h: GT_ERR_INTERNAL (1) is kind 0
}

type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }

// guard runs one exported call: a panic becomes InternalError, and the
// error is recorded for gt_last_error and returned as its code.
func guard(f func() error) (rc C.int) {
	var err error
	defer func() { rc = status(err) }()
	defer errs.Recover(&err)
	err = f()
	return
}

// guardKey is guard for calls that take a key.
func guardKey(key *C.gt_cchar, f func(k string) error) C.int {
	return guard(func() error {
		k, err := goKey(key)
		if err != nil {
			return err
		}
		return f(k)
	})
}

func goKey(key *C.gt_cchar) (string, error) {
	if key == nil {
		return "", errs.New(errs.InvalidArgument, "key is NULL")
	}
	return C.GoString((*C.char)(key)), nil
}

func fillInfo(info *C.gt_tensor_info, st *core.Stat, dt tensor.DType) {
	if info == nil {
		return
	}
	*info = C.gt_tensor_info{}
	info.dtype = C.int32_t(dt)
	info.ndim = C.int32_t(len(st.Shape))
	for i, d := range st.Shape {
		info.shape[i] = C.int64_t(d)
	}
	info.raw_bytes = C.uint64_t(st.RawBytes)
	info.stored_bytes = C.uint64_t(st.StoredBytes)
	for i := 0; i < len(st.Codec) && i < len(info.codec)-1; i++ {
		info.codec[i] = C.char(st.Codec[i])
	}
}

func stat(h int64, key string, info *C.gt_tensor_info) (*core.Stat, tensor.DType, error) {
	st, err := binding.StatKey(h, key, 0)
	if err != nil {
		return nil, 0, err
	}
	dt, err := tensor.ParseDType(st.DType)
	if err != nil {
		return nil, 0, err
	}
	fillInfo(info, st, dt)
	return st, dt, nil
}

//export gt_abi_version
func gt_abi_version() C.int { return C.GT_ABI_VERSION }

//export gt_open
func gt_open(url *C.gt_cchar, out *C.gt_store) C.int {
	return guard(func() error {
		if url == nil || out == nil {
			return errs.New(errs.InvalidArgument, "gt_open: url and store must not be NULL")
		}
		h, err := binding.Open(C.GoString((*C.char)(url)))
		if err == nil {
			*out = C.gt_store(h)
		}
		return err
	})
}

//export gt_close
func gt_close(h C.gt_store) C.int {
	return guard(func() error { return binding.Close(int64(h)) })
}

//export gt_write_tensor
func gt_write_tensor(h C.gt_store, key *C.gt_cchar, data *C.gt_cvoid, nbytes C.size_t,
	dtype C.int, shape *C.gt_cint64, ndim C.int, codec *C.gt_cchar) C.int {
	return guardKey(key, func(k string) error {
		raw, dims, err := goTensor(unsafe.Pointer(data), nbytes, shape, ndim)
		if err != nil {
			return err
		}
		return binding.Write(int64(h), k, raw, int64(dtype), dims, codecOr(codec, "none"), -1, 0)
	})
}

// goTensor views a caller's tensor: nbytes at data, of the C shape.
func goTensor(data unsafe.Pointer, nbytes C.size_t, shape *C.gt_cint64, ndim C.int) ([]byte, []int64, error) {
	dims, err := goShape(shape, ndim)
	if err != nil {
		return nil, nil, err
	}
	b, err := binding.BytesAt(uintptr(data), int64(nbytes))
	return b, dims, err
}

// codecOr is the C string codec, or def where it is NULL.
func codecOr(codec *C.gt_cchar, def string) string {
	if codec == nil {
		return def
	}
	return C.GoString((*C.char)(codec))
}

// goShape views a C shape array.
func goShape(shape *C.gt_cint64, ndim C.int) ([]int64, error) {
	if ndim < 0 || ndim > tensor.MaxDims || (ndim > 0 && shape == nil) {
		return nil, errs.New(errs.InvalidArgument, "bad shape: ndim %d, shape %p", ndim, shape)
	}
	if ndim == 0 {
		return nil, nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)), nil
}

//export gt_write_rows
func gt_write_rows(h C.gt_store, key *C.gt_cchar, start C.int64_t, data *C.gt_cvoid, nbytes C.size_t,
	dtype C.int, shape *C.gt_cint64, ndim C.int) C.int {
	return guardKey(key, func(k string) error {
		raw, dims, err := goTensor(unsafe.Pointer(data), nbytes, shape, ndim)
		if err != nil {
			return err
		}
		return binding.WriteRows(int64(h), k, int64(start), raw, int64(dtype), dims, -1, 0)
	})
}

//export gt_write_for_rows
func gt_write_for_rows(h C.gt_store, key *C.gt_cchar, data *C.gt_cvoid, nbytes C.size_t,
	dtype C.int, shape *C.gt_cint64, ndim C.int, codec *C.gt_cchar, chunkRows C.int64_t) C.int {
	return guardKey(key, func(k string) error {
		raw, dims, err := goTensor(unsafe.Pointer(data), nbytes, shape, ndim)
		if err != nil {
			return err
		}
		return binding.WriteForRows(int64(h), k, raw, int64(dtype), dims, codecOr(codec, "none"), int64(chunkRows), -1, 0)
	})
}

//export gt_read_rows
func gt_read_rows(h C.gt_store, key *C.gt_cchar, start C.int64_t, buf unsafe.Pointer, nbytes C.size_t,
	dtype C.int, shape *C.gt_cint64, ndim C.int) C.int {
	return guardKey(key, func(k string) error {
		dst, dims, err := goTensor(buf, nbytes, shape, ndim)
		if err != nil {
			return err
		}
		return binding.ReadRows(int64(h), k, int64(start), dst, int64(dtype), dims, -1, 0)
	})
}

//export gt_read_tensor
func gt_read_tensor(h C.gt_store, key *C.gt_cchar, buf unsafe.Pointer, size C.size_t, info *C.gt_tensor_info) C.int {
	return guardKey(key, func(k string) error {
		f, err := binding.FetchFrame(int64(h), k, 0)
		if err != nil {
			return err
		}
		hd := f.Header
		st := &core.Stat{Shape: hd.Meta.Shape, RawBytes: hd.RawSize, StoredBytes: int64(hd.Size()) + hd.PayloadSize(), Codec: codecName(hd.Codec)}
		fillInfo(info, st, hd.Meta.DType)
		if uint64(size) < uint64(hd.RawSize) {
			binding.ReleaseFrame(f)
			return &codeError{errBufferTooSmall, errs.New(errs.InvalidArgument,
				"buffer of %d bytes is too small for key %q: %s%v needs %d", size, k, hd.Meta.DType, hd.Meta.Shape, hd.RawSize).Error()}
		}
		dst, err := binding.BytesAt(uintptr(buf), hd.RawSize)
		if err != nil {
			binding.ReleaseFrame(f)
			return err
		}
		return binding.DecodeFrame(f, dst, 0)
	})
}

//export gt_stat
func gt_stat(h C.gt_store, key *C.gt_cchar, info *C.gt_tensor_info) C.int {
	return guardKey(key, func(k string) error {
		if info == nil {
			return errs.New(errs.InvalidArgument, "gt_stat: info must not be NULL")
		}
		_, _, err := stat(int64(h), k, info)
		return err
	})
}

//export gt_delete
func gt_delete(h C.gt_store, key *C.gt_cchar) C.int {
	return guardKey(key, func(k string) error { return binding.Delete(int64(h), k, 0) })
}

//export gt_exists
func gt_exists(h C.gt_store, key *C.gt_cchar) C.int {
	var ok bool
	rc := guardKey(key, func(k string) (err error) {
		ok, err = binding.Exists(int64(h), k, 0)
		return err
	})
	switch {
	case rc != C.GT_OK:
		return -rc
	case ok:
		return 1
	}
	return 0
}

//export gt_store_stats
func gt_store_stats(h C.gt_store, out *C.gt_stats) C.int {
	return guard(func() error {
		if out == nil {
			return errs.New(errs.InvalidArgument, "gt_store_stats: out must not be NULL")
		}
		st, err := binding.StatsOf(int64(h))
		if err != nil {
			return err
		}
		u := func(n int64) C.uint64_t { return C.uint64_t(n) }
		*out = C.gt_stats{
			writes: u(st.Ops[core.OpWrite]), reads: u(st.Ops[core.OpRead]), stats: u(st.Ops[core.OpStat]),
			deletes: u(st.Ops[core.OpDelete]), exists: u(st.Ops[core.OpExists]), lists: u(st.Ops[core.OpKeys]),
			errors:            u(st.Errors),
			raw_bytes_written: u(st.RawBytesWritten), stored_bytes_written: u(st.StoredBytesWritten), wire_bytes_out: u(st.WireBytesOut),
			raw_bytes_read: u(st.RawBytesRead), stored_bytes_read: u(st.StoredBytesRead), wire_bytes_in: u(st.WireBytesIn),
			encode_seconds: C.double(st.EncodeSeconds), decode_seconds: C.double(st.DecodeSeconds), move_seconds: C.double(st.MoveSeconds),
			write_seconds: C.double(st.WriteSeconds), read_seconds: C.double(st.ReadSeconds),
			ratio: C.double(st.Ratio), write_gbps: C.double(st.WriteGBps), read_gbps: C.double(st.ReadGBps),
			link_bytes_per_second: C.double(st.Link.BytesPerSecond), link_latency_seconds: C.double(st.Link.LatencySeconds),
		}
		return nil
	})
}

//export gt_reset_stats
func gt_reset_stats(h C.gt_store) C.int {
	return guard(func() error { return binding.ResetStats(int64(h)) })
}
