// Package pybind is the surface gopy turns into the gotensor._native
// Python extension. It only converts (pointer, length) pairs into Go
// slices, recovers panics and keeps failed calls' errors for TakeError
// (see guard); binding does the work. Tensors cross as their data pointer
// and byte count, never as copies.
package pybind

import (
	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/parallel"

	// GPU discovery and GPU-local pinning (NVML).
	_ "github.com/gotensor/gotensor/gotensor/binding/gpu"

	// The code gopy generates for this package imports gopyh.
	_ "github.com/go-python/gopy/gopyh"
)

func Version() string { return core.Version }

// Info describes the build, and with hardware the machine too.
func Info(hardware bool) (s string, err error) {
	defer guard(&err)
	return binding.InfoJSON(hardware)
}

func SetGPUAffinity(on bool) (enabled bool, err error) {
	defer guard(&err)
	return binding.SetGPUAffinity(on), nil
}

func SetWorkers(n int64) (w int64, err error) {
	defer guard(&err)
	if n > int64(parallel.MaxWorkers) {
		n = int64(parallel.MaxWorkers) + 1 // refused below, not wrapped into an int
	}
	v, err := binding.SetWorkers(int(n))
	return int64(v), err
}

func Open(url string) (h int64, err error) {
	defer guard(&err)
	return binding.Open(url)
}

func Close(h int64) (err error) {
	defer guard(&err)
	return binding.Close(h)
}

// Tensors cross as (ptr, n) bytes; dtypes as binding codes (Info's
// dtype_codes); shapes as (shapePtr, ndim) int64 arrays. gpu: the index of
// the GPU the tensor lives on (its coding runs on that GPU's local CPUs),
// or -1. timeoutNs: > 0 bounds the call, 0 takes the store's default, < 0
// none.

func Write(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim int64, codec string, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return err
	}
	return binding.Write(h, key, raw, dtype, shape, codec, int(gpu), timeoutNs)
}

// WriteForRows is Write laying the tensor out in chunks of chunkRows rows
// for later row writes (binding.WriteForRows).
func WriteForRows(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim int64, codec string, chunkRows, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return err
	}
	return binding.WriteForRows(h, key, raw, dtype, shape, codec, chunkRows, int(gpu), timeoutNs)
}

func ReadInto(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	dst, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return err
	}
	return binding.ReadInto(h, key, dst, dtype, shape, int(gpu), timeoutNs)
}

// WriteRows writes the tensor at ptr as rows [start, start+shape[0]) of
// the stored tensor under key: only the chunks they touch are re-encoded.
func WriteRows(h int64, key string, start int64, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return err
	}
	return binding.WriteRows(h, key, start, raw, dtype, shape, int(gpu), timeoutNs)
}

// ReadRows decodes rows [start, start+shape[0]) of the tensor under key
// into the buffer at ptr (dtype and shape are the rows').
func ReadRows(h int64, key string, start int64, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	dst, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return err
	}
	return binding.ReadRows(h, key, start, dst, dtype, shape, int(gpu), timeoutNs)
}

// WorkCounters returns the raw bytes this process has encoded and decoded,
// as JSON {"encoded", "decoded"}.
func WorkCounters() (js string, err error) {
	defer guard(&err)
	return binding.WorkCounters(), nil
}

// Read fetches key, fills the MetaWords int64s at metaPtr (dtype code,
// rank, bytes, dims) and decodes into the scratch buffer when the tensor
// fits (result 0); otherwise it returns a fetch handle for Decode.
func Read(h int64, key string, scratchPtr uintptr, scratchN int64, metaPtr uintptr, gpu, timeoutNs int64) (fh int64, err error) {
	defer guard(&err)
	scratch, meta, err := readArgs(scratchPtr, scratchN, metaPtr)
	if err != nil {
		return 0, err
	}
	return binding.Read(h, key, scratch, meta, int(gpu), timeoutNs)
}

// MetaWords is the length of Read's meta buffer in int64s.
func MetaWords() int64 { return binding.MetaWords }

func Decode(fh int64, ptr uintptr, n, gpu, timeoutNs int64) (err error) {
	defer guard(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		binding.Release(fh)
		return err
	}
	return binding.Decode(fh, dst, int(gpu), timeoutNs)
}

func Release(fh int64) (err error) {
	defer guard(&err)
	binding.Release(fh)
	return nil
}

func Stat(h int64, key string, timeoutNs int64) (js string, err error) {
	defer guard(&err)
	return binding.Stat(h, key, timeoutNs)
}

func Describe(h int64, key string, timeoutNs int64) (js string, err error) {
	defer guard(&err)
	return binding.Describe(h, key, timeoutNs)
}

func Delete(h int64, key string, timeoutNs int64) (err error) {
	defer guard(&err)
	return binding.Delete(h, key, timeoutNs)
}

func Exists(h int64, key string, timeoutNs int64) (ok bool, err error) {
	defer guard(&err)
	return binding.Exists(h, key, timeoutNs)
}

func Keys(h int64, prefix string, timeoutNs int64) (keys string, err error) {
	defer guard(&err)
	return binding.Keys(h, prefix, timeoutNs)
}

func Usage(h int64) (js string, err error) {
	defer guard(&err)
	return binding.Usage(h)
}

func Stats(h int64) (js string, err error) {
	defer guard(&err)
	return binding.Stats(h)
}

func ResetStats(h int64) (err error) {
	defer guard(&err)
	return binding.ResetStats(h)
}

// Asynchronous calls return an operation id; Completions reports results
// and Cancel cancels a running one.

func StartWrite(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim int64, codec string, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.StartWrite(h, key, raw, dtype, shape, codec, int(gpu), timeoutNs), nil
}

func StartReadInto(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	dst, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.StartReadInto(h, key, dst, dtype, shape, int(gpu), timeoutNs), nil
}

// StartRead is Read on a goroutine: the completion's value is Read's
// result; scratch and meta must stay valid until then.
func StartRead(h int64, key string, scratchPtr uintptr, scratchN int64, metaPtr uintptr, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	scratch, meta, err := readArgs(scratchPtr, scratchN, metaPtr)
	if err != nil {
		return 0, err
	}
	return binding.StartRead(h, key, scratch, meta, int(gpu), timeoutNs), nil
}

// StartWriteRows is WriteRows on a goroutine.
func StartWriteRows(h int64, key string, start int64, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.StartWriteRows(h, key, start, raw, dtype, shape, int(gpu), timeoutNs), nil
}

// StartReadRows is ReadRows on a goroutine.
func StartReadRows(h int64, key string, start int64, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	dst, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.StartReadRows(h, key, start, dst, dtype, shape, int(gpu), timeoutNs), nil
}

// StartWriteForRows is WriteForRows on a goroutine.
func StartWriteForRows(h int64, key string, ptr uintptr, n, dtype int64, shapePtr uintptr, ndim int64, codec string, chunkRows, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	raw, shape, err := tensorArgs(ptr, n, shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.StartWriteForRows(h, key, raw, dtype, shape, codec, chunkRows, int(gpu), timeoutNs), nil
}

// StartDelete is Delete on a goroutine.
func StartDelete(h int64, key string, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	return binding.StartDelete(h, key, timeoutNs), nil
}

func StartDecode(fh int64, ptr uintptr, n, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		binding.Release(fh)
		return 0, err
	}
	return binding.StartDecode(fh, dst, int(gpu), timeoutNs), nil
}

// Cancel cancels a running operation (it then fails with Timeout) and
// reports whether it was still running.
func Cancel(op int64) (running bool, err error) {
	defer guard(&err)
	return binding.Cancel(op), nil
}

// Hold keeps op's completion for ClaimOps, out of Completions' queue
// (binding.Hold); false if op finished before.
func Hold(op int64) (held bool, err error) {
	defer guard(&err)
	return binding.Hold(op), nil
}

// ClaimOps waits for the n operations whose ids are the int64s at opsPtr
// and returns their completions as Completions does, but for those
// Completions has returned already (binding.Claim).
func ClaimOps(opsPtr uintptr, n int64) (recs string, err error) {
	defer guard(&err)
	ops, err := binding.Int64sAt(opsPtr, n)
	if err != nil {
		return "", err
	}
	return binding.CompletionsJSON(binding.Claim(ops)), nil
}

// Completions returns finished operations as a JSON array of
// binding.Completion records ({"op", "value"}, and a failed one's "kind",
// "key" and "message"), or "" after timeoutMs.
func Completions(timeoutMs int64) (recs string, err error) {
	defer guard(&err)
	return binding.Completions(timeoutMs), nil
}

// Streamed writes and ranged reads stage CUDA tensors through small pinned
// host buffers, overlapping the copies with coding.

func BeginWrite(h int64, key string, dtype int64, shapePtr uintptr, ndim int64, codec string, gpu int64) (wh int64, err error) {
	defer guard(&err)
	shape, err := binding.Int64sAt(shapePtr, ndim)
	if err != nil {
		return 0, err
	}
	return binding.BeginWrite(h, key, dtype, shape, codec, int(gpu))
}

func WriterChunk(wh int64) (n int64, err error) {
	defer guard(&err)
	return binding.WriterChunk(wh)
}

func StartWritePart(wh, off int64, ptr uintptr, n int64) (op int64, err error) {
	defer guard(&err)
	part, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartWritePart(wh, off, part), nil
}

func CommitWrite(wh, timeoutNs int64) (err error) {
	defer guard(&err)
	return binding.CommitWrite(wh, timeoutNs)
}

func AbortWrite(wh int64) (err error) {
	defer guard(&err)
	binding.AbortWrite(wh)
	return nil
}

func FetchChunk(fh int64) (n int64, err error) {
	defer guard(&err)
	return binding.FetchChunk(fh)
}

func StartDecodeRange(fh, off int64, ptr uintptr, n, gpu, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	dst, err := binding.BytesAt(ptr, n)
	if err != nil {
		return 0, err
	}
	return binding.StartDecodeRange(fh, off, dst, int(gpu), timeoutNs), nil
}

// Ping returns x: the cost of a bare call, for benchmarks.
func Ping(x int64) int64 { return x }

func tensorArgs(ptr uintptr, n int64, shapePtr uintptr, ndim int64) ([]byte, []int64, error) {
	b, err := binding.BytesAt(ptr, n)
	if err != nil {
		return nil, nil, err
	}
	shape, err := binding.Int64sAt(shapePtr, ndim)
	return b, shape, err
}

func readArgs(scratchPtr uintptr, scratchN int64, metaPtr uintptr) ([]byte, []int64, error) {
	scratch, err := binding.BytesAt(scratchPtr, scratchN)
	if err != nil {
		return nil, nil, err
	}
	meta, err := binding.Int64sAt(metaPtr, binding.MetaWords)
	return scratch, meta, err
}

// Panic exists for tests: it proves a Go panic becomes a Python exception.
func Panic() (err error) {
	defer guard(&err)
	panic("deliberate panic")
}

// Views (binding.View): a read that returns a tensor viewing the stored
// bytes in place.

// View fetches key for reading in place and fills the meta buffer as Read
// does. It returns the address of a DLPack managed tensor over the
// tensor's bytes (> 0; torch.from_dlpack takes it in a "dltensor"
// capsule), or the negated fetch handle of a copy to Decode where the
// tensor cannot be viewed.
func View(h int64, key string, metaPtr uintptr, timeoutNs int64) (r int64, err error) {
	defer guard(&err)
	meta, err := binding.Int64sAt(metaPtr, binding.MetaWords)
	if err != nil {
		return 0, err
	}
	return binding.View(h, key, meta, timeoutNs)
}

// Maps says whether h's store maps frames for views (mem://, file://),
// where a view is made in the calling thread in microseconds.
func Maps(h int64) (ok bool, err error) {
	defer guard(&err)
	return binding.Maps(h), nil
}

// StartView is View on a goroutine; meta must stay valid until it completes.
func StartView(h int64, key string, metaPtr uintptr, timeoutNs int64) (op int64, err error) {
	defer guard(&err)
	meta, err := binding.Int64sAt(metaPtr, binding.MetaWords)
	if err != nil {
		return 0, err
	}
	return binding.StartView(h, key, meta, timeoutNs), nil
}

// DropView releases a view whose managed tensor torch never took.
func DropView(addr int64) (err error) {
	defer guard(&err)
	binding.DropView(addr)
	return nil
}

// SetPinFuncs installs cudaHostRegister and cudaHostUnregister (addresses
// in the CUDA runtime torch loaded) for views of mem://?pinned=true
// stores; 0, 0 removes them.
func SetPinFuncs(registerFn, unregisterFn uintptr, flags int64) (err error) {
	defer guard(&err)
	binding.SetPinFuncs(registerFn, unregisterFn, uint32(flags))
	return nil
}

// ViewCounts describes this process's views as JSON (binding.ViewCounts).
func ViewCounts() (js string, err error) {
	defer guard(&err)
	return binding.ViewCountsJSON(), nil
}
