// Package pybind is the surface gopy turns into the gotensor._native
// Python extension. It only converts (pointer, length) pairs into Go
// slices and recovers panics; binding does the work. Tensors cross as
// their data pointer and byte count, never as copies.
package pybind

import (
	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"

	// GPU discovery and GPU-local pinning (NVML).
	_ "github.com/gotensor/gotensor/gotensor/binding/gpu"

	// The code gopy generates for this package imports gopyh.
	_ "github.com/go-python/gopy/gopyh"
)

func Version() string { return core.Version }

// Info describes the build, and with hardware the machine too.
func Info(hardware bool) (s string, err error) {
	defer errs.Recover(&err)
	return binding.InfoJSON(hardware)
}

func SetGPUAffinity(on bool) (enabled bool, err error) {
	defer errs.Recover(&err)
	return binding.SetGPUAffinity(on), nil
}

func SetWorkers(n int64) (w int64, err error) {
	defer errs.Recover(&err)
	return int64(binding.SetWorkers(int(n))), nil
}

func Open(url string) (h int64, err error) {
	defer errs.Recover(&err)
	return binding.Open(url)
}

func Close(h int64) (err error) {
	defer errs.Recover(&err)
	return binding.Close(h)
}

// gpu: the index of the GPU the tensor lives on (its coding runs on that
// GPU's local CPUs), or -1.
func Write(h int64, key string, ptr uintptr, n int64, dtype, shape, codec string, gpu int64) (err error) {
	defer errs.Recover(&err)
	raw, err := binding.BytesAt(ptr, n)
	if err != nil {
		return err
	}
	return binding.Write(h, key, raw, dtype, shape, codec, int(gpu))
}

func ReadInto(h int64, key string, ptr uintptr, n int64, dtype, shape string, gpu int64) (err error) {
	defer errs.Recover(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		return err
	}
	return binding.ReadInto(h, key, dst, dtype, shape, int(gpu))
}

func Fetch(h int64, key string) (desc string, err error) {
	defer errs.Recover(&err)
	return binding.Fetch(h, key)
}

func Decode(fh int64, ptr uintptr, n int64, gpu int64) (err error) {
	defer errs.Recover(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		binding.Release(fh)
		return err
	}
	return binding.Decode(fh, dst, int(gpu))
}

func Release(fh int64) (err error) {
	defer errs.Recover(&err)
	binding.Release(fh)
	return nil
}

func Stat(h int64, key string) (js string, err error) {
	defer errs.Recover(&err)
	return binding.Stat(h, key)
}

func Delete(h int64, key string) (err error) {
	defer errs.Recover(&err)
	return binding.Delete(h, key)
}

func Exists(h int64, key string) (ok bool, err error) {
	defer errs.Recover(&err)
	return binding.Exists(h, key)
}

func Keys(h int64, prefix string) (keys string, err error) {
	defer errs.Recover(&err)
	return binding.Keys(h, prefix)
}

func Usage(h int64) (js string, err error) {
	defer errs.Recover(&err)
	return binding.Usage(h)
}

// Asynchronous calls return an operation id; Completions reports results.

func StartWrite(h int64, key string, ptr uintptr, n int64, dtype, shape, codec string, gpu int64) (op int64, err error) {
	defer errs.Recover(&err)
	raw, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartWrite(h, key, raw, dtype, shape, codec, int(gpu)), nil
}

func StartReadInto(h int64, key string, ptr uintptr, n int64, dtype, shape string, gpu int64) (op int64, err error) {
	defer errs.Recover(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartReadInto(h, key, dst, dtype, shape, int(gpu)), nil
}

func StartFetch(h int64, key string) (op int64, err error) {
	defer errs.Recover(&err)
	return binding.StartFetch(h, key), nil
}

func StartDecode(fh int64, ptr uintptr, n int64, gpu int64) (op int64, err error) {
	defer errs.Recover(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		binding.Release(fh)
		return 0, err
	}
	return binding.StartDecode(fh, dst, int(gpu)), nil
}

func Completions(timeoutMs int64) (recs string, err error) {
	defer errs.Recover(&err)
	return binding.Completions(timeoutMs), nil
}

// Streamed writes and ranged reads stage CUDA tensors through small pinned
// host buffers, overlapping the copies with coding.

func BeginWrite(h int64, key, dtype, shape, codec string, gpu int64) (wh int64, err error) {
	defer errs.Recover(&err)
	return binding.BeginWrite(h, key, dtype, shape, codec, int(gpu))
}

func WriterChunk(wh int64) (n int64, err error) {
	defer errs.Recover(&err)
	return binding.WriterChunk(wh)
}

func StartWritePart(wh, off int64, ptr uintptr, n int64) (op int64, err error) {
	defer errs.Recover(&err)
	part, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartWritePart(wh, off, part), nil
}

func CommitWrite(wh int64) (err error) {
	defer errs.Recover(&err)
	return binding.CommitWrite(wh)
}

func AbortWrite(wh int64) (err error) {
	defer errs.Recover(&err)
	binding.AbortWrite(wh)
	return nil
}

func FetchChunk(fh int64) (n int64, err error) {
	defer errs.Recover(&err)
	return binding.FetchChunk(fh)
}

func StartDecodeRange(fh, off int64, ptr uintptr, n int64, gpu int64) (op int64, err error) {
	defer errs.Recover(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartDecodeRange(fh, off, dst, int(gpu)), nil
}

// Serve starts `gotensor serve` in the background: "handle;url".
func Serve(listen, transport string, capacity int64, dir, tokenFile, tlsCert, tlsKey string) (desc string, err error) {
	defer errs.Recover(&err)
	return binding.Serve(listen, transport, capacity, dir, tokenFile, tlsCert, tlsKey)
}

func StopServe(h int64) (err error) {
	defer errs.Recover(&err)
	return binding.StopServe(h)
}

func ParseSize(s string) (n int64, err error) {
	defer errs.Recover(&err)
	return store.ParseSize(s)
}

// Panic exists for tests: it proves a Go panic becomes a Python exception.
func Panic() (err error) {
	defer errs.Recover(&err)
	panic("deliberate panic")
}
