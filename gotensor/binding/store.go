package binding

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

var (
	stores  = &table[*openStore]{name: "store"}
	fetches = &table[*core.Fetched]{name: "fetch"}
	writers = &table[*writer]{name: "writer"}
)

type writer struct {
	*core.Writer
	s   *openStore
	h   int64
	key string
	gpu int
}

// Open opens a store and returns its handle. A ?timeout= in the URL
// becomes the default timeout of the store's calls.
func Open(url string) (int64, error) {
	d, err := urlTimeout(url)
	if err != nil {
		return 0, err
	}
	s, err := core.Open(url)
	if err != nil {
		return 0, err
	}
	return stores.add(&openStore{s, d}), nil
}

// Close closes a store; its handle becomes invalid.
func Close(h int64) error {
	releaseFreed()
	s, err := stores.take(h)
	if err != nil {
		return err
	}
	return s.Close()
}

// StoreOf returns the store behind a handle.
func StoreOf(h int64) (*core.Store, error) {
	s, err := stores.get(h)
	if err != nil {
		return nil, err
	}
	return s.Store, nil
}

// NewMeta checks a dtype code (tensor.DType) and copies a shape.
func NewMeta(dtype int64, shape []int64) (tensor.Meta, error) {
	d := tensor.DType(dtype)
	if dtype < 0 || dtype > 255 || !d.Valid() {
		return tensor.Meta{}, errs.New(errs.InvalidArgument, "unknown dtype code %d", dtype)
	}
	if len(shape) > tensor.MaxDims {
		return tensor.Meta{}, errs.New(errs.InvalidArgument, "%d dimensions, at most %d", len(shape), tensor.MaxDims)
	}
	return tensor.Meta{DType: d, Shape: append(make([]int64, 0, len(shape)), shape...)}, nil
}

// MetaWords is the length of the int64 buffer Read fills: dtype code,
// rank, byte size, then the dimensions.
const MetaWords = 3 + tensor.MaxDims

// putMeta describes a fetched tensor in meta (MetaWords long).
func putMeta(meta []int64, hd *frame.Header) error {
	if len(meta) < 3+len(hd.Meta.Shape) {
		return errs.New(errs.InvalidArgument, "meta buffer holds %d words, needs %d", len(meta), 3+len(hd.Meta.Shape))
	}
	meta[0], meta[1], meta[2] = int64(hd.Meta.DType), int64(len(hd.Meta.Shape)), hd.RawSize
	copy(meta[3:], hd.Meta.Shape)
	return nil
}

// syncCall prepares a synchronous call on key: its context, and a wait
// for the asynchronous operations submitted on the key before.
func syncCall(h int64, key string, timeoutNs int64) (*openStore, context.Context, context.CancelFunc, error) {
	releaseFreed()
	s, err := stores.get(h)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := callContext(s, timeoutNs)
	if err := awaitKey(ctx, h, key); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return s, ctx, cancel, nil
}

// Write encodes and stores a tensor held in caller memory. gpu is the
// index of the GPU the tensor came from (its coding then runs on that
// GPU's local CPUs), or -1.
func Write(h int64, key string, raw []byte, dtype int64, shape []int64, codecName string, gpu int, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	return write(ctx, s, key, raw, dtype, shape, codecName, gpu)
}

func write(ctx context.Context, s *openStore, key string, raw []byte, dtype int64, shape []int64, codecName string, gpu int) error {
	m, err := NewMeta(dtype, shape)
	if err != nil {
		return err
	}
	return ctxError(ctx, s.WriteTensor(gpuContext(ctx, gpu), key, m, raw, codecName))
}

// ReadInto decodes the tensor under key into dst after checking that it has
// the given dtype and shape; gpu as for Write (the tensor's destination).
// dst's whole 2 MiB pages are advised huge first (see adviseHugePages).
func ReadInto(h int64, key string, dst []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	return readInto(ctx, s, key, dst, dtype, shape, gpu)
}

func readInto(ctx context.Context, s *openStore, key string, dst []byte, dtype int64, shape []int64, gpu int) error {
	m, err := NewMeta(dtype, shape)
	if err != nil {
		return err
	}
	adviseHugePages(dst)
	return ctxError(ctx, s.ReadTensor(gpuContext(ctx, gpu), key, m, dst))
}

// Read fetches the tensor under key and describes it in meta (see
// MetaWords). A tensor that fits in scratch is decoded there in the same
// call and 0 is returned; otherwise the result is a fetch handle for
// Decode, DecodeRange or Release (an empty scratch always gives one).
func Read(h int64, key string, scratch []byte, meta []int64, gpu int, timeoutNs int64) (int64, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return 0, err
	}
	defer cancel()
	return read(ctx, s, key, scratch, meta, gpu)
}

func read(ctx context.Context, s *openStore, key string, scratch []byte, meta []int64, gpu int) (int64, error) {
	f, err := s.Fetch(gpuContext(ctx, gpu), key)
	if err != nil {
		return 0, ctxError(ctx, err)
	}
	if err := putMeta(meta, f.Header); err != nil {
		release(f)
		return 0, err
	}
	if n := f.Header.RawSize; len(scratch) > 0 && n <= int64(len(scratch)) {
		defer release(f)
		return 0, decodeFetched(ctx, f, scratch[:n], gpu)
	}
	return fetches.add(f), nil
}

// FetchFrame is Fetch in the order of key's operations, for callers that
// decode themselves (the C ABI); pair it with DecodeFrame.
func FetchFrame(h int64, key string, timeoutNs int64) (*core.Fetched, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return nil, err
	}
	defer cancel()
	f, err := s.Fetch(ctx, key)
	return f, ctxError(ctx, err)
}

// ReleaseFrame drops a frame from FetchFrame without decoding it.
func ReleaseFrame(f *core.Fetched) { release(f) }

// DecodeFrame decodes a frame from FetchFrame into dst and releases it.
func DecodeFrame(f *core.Fetched, dst []byte, timeoutNs int64) error {
	ctx, cancel := callContext(nil, timeoutNs)
	defer cancel()
	defer release(f)
	return decodeInto(ctx, f, dst, -1)
}

// Decode decodes a fetched frame into dst and releases the fetch handle;
// gpu as for Write.
func Decode(fh int64, dst []byte, gpu int, timeoutNs int64) error {
	ctx, cancel := callContext(nil, timeoutNs)
	defer cancel()
	return decodeHandle(ctx, fh, dst, gpu)
}

func decodeHandle(ctx context.Context, fh int64, dst []byte, gpu int) error {
	f, err := fetches.take(fh)
	if err != nil {
		return err
	}
	defer release(f)
	return decodeInto(ctx, f, dst, gpu)
}

// gpuContext carries the pinning for work on a GPU's tensor.
func gpuContext(ctx context.Context, gpu int) context.Context {
	return core.WithPin(ctx, pinFor(gpu))
}

// Hardware hooks, set by package binding/gpu when linked in (the Python
// extension links it; the C library does not, to stay free of NVML).
var (
	// PinFor returns how to pin workers for a tensor on GPU gpu, or nil.
	PinFor = func(gpu int) parallel.Pin { return nil }
	// SetGPUAffinity turns GPU-local pinning on or off and reports whether it is on.
	SetGPUAffinity = func(on bool) bool { return false }
	// Hardware reports on the machine (hw.Report), or nil.
	Hardware = func() any { return nil }
)

func pinFor(gpu int) parallel.Pin {
	if gpu < 0 {
		return nil
	}
	return PinFor(gpu)
}

// Release drops a fetch handle without decoding.
func Release(fh int64) {
	if f, err := fetches.take(fh); err == nil {
		release(f)
	}
}

// Stat returns the stored tensor's description as JSON.
func Stat(h int64, key string, timeoutNs int64) (string, error) {
	st, err := StatKey(h, key, timeoutNs)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	return string(b), err
}

// StatKey describes the tensor under key from its header.
func StatKey(h int64, key string, timeoutNs int64) (*core.Stat, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return nil, err
	}
	defer cancel()
	st, err := s.Stat(ctx, key)
	return st, ctxError(ctx, err)
}

// Describe is Stat as part of another call (a row read that learns the
// rows' shape first): not counted as a stat in the store's stats.
func Describe(h int64, key string, timeoutNs int64) (string, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return "", err
	}
	defer cancel()
	st, err := s.Describe(ctx, key)
	if err = ctxError(ctx, err); err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	return string(b), err
}

func Delete(h int64, key string, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	return ctxError(ctx, s.Delete(ctx, key))
}

func Exists(h int64, key string, timeoutNs int64) (bool, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return false, err
	}
	defer cancel()
	ok, err := s.Exists(ctx, key)
	return ok, ctxError(ctx, err)
}

// Keys returns the keys under prefix, newline-separated (keys never hold
// a newline).
func Keys(h int64, prefix string, timeoutNs int64) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	ctx, cancel := callContext(s, timeoutNs)
	defer cancel()
	ks, err := s.Keys(ctx, prefix)
	return strings.Join(ks, "\n"), ctxError(ctx, err)
}

// Usage returns the store's URL and fill level as JSON.
func Usage(h int64) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	u := s.Store.Usage()
	out := map[string]any{"url": s.URL(), "keys": u.Keys, "bytes": u.Bytes, "capacity": u.Capacity}
	if len(u.Unanswered) > 0 { // a part: these nodes' keys and bytes are missing
		out["unanswered"] = u.Unanswered
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// Stats returns what the store did (core.Stats) as JSON.
func Stats(h int64) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(s.Store.Stats())
	return string(b), err
}

// StatsOf returns what the store did.
func StatsOf(h int64) (core.Stats, error) {
	s, err := stores.get(h)
	if err != nil {
		return core.Stats{}, err
	}
	return s.Store.Stats(), nil
}

// ResetStats zeroes the store's counts.
func ResetStats(h int64) error {
	s, err := stores.get(h)
	if err != nil {
		return err
	}
	s.Store.ResetStats()
	return nil
}

// BeginWrite starts a streamed write (a tensor staged part by part, as
// from a GPU); WriterChunk tells the part alignment. Nothing is visible
// under key until CommitWrite, which takes its place in key's order.
func BeginWrite(h int64, key string, dtype int64, shape []int64, codecName string, gpu int) (int64, error) {
	s, err := stores.get(h)
	if err != nil {
		return 0, err
	}
	m, err := NewMeta(dtype, shape)
	if err != nil {
		return 0, err
	}
	w, err := s.BeginWrite(gpuContext(root, gpu), key, m, codecName)
	if err != nil {
		return 0, err
	}
	return writers.add(&writer{Writer: w, s: s, h: h, key: key, gpu: gpu}), nil
}

// WriterChunk is the byte alignment of a streamed write's parts.
func WriterChunk(wh int64) (int64, error) {
	w, err := writers.get(wh)
	if err != nil {
		return 0, err
	}
	return w.ChunkSize(), nil
}

// WritePart codes the tensor bytes at offset off.
func WritePart(wh, off int64, part []byte) error {
	w, err := writers.get(wh)
	if err != nil {
		return err
	}
	return w.WriteAt(part, off)
}

// CommitWrite stores a streamed write and releases its handle.
func CommitWrite(wh int64, timeoutNs int64) error {
	w, err := writers.take(wh)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(w.s, timeoutNs)
	defer cancel()
	if err := awaitKey(ctx, w.h, w.key); err != nil {
		abort(w.Writer)
		return err
	}
	return ctxError(ctx, w.Commit(ctx))
}

// AbortWrite drops a streamed write.
func AbortWrite(wh int64) {
	if w, err := writers.take(wh); err == nil {
		abort(w.Writer)
	}
}

// FetchChunk is the chunk size a fetched frame's ranges align to.
func FetchChunk(fh int64) (int64, error) {
	f, err := fetches.get(fh)
	if err != nil {
		return 0, err
	}
	return int64(f.Header.ChunkSize), nil
}

// DecodeRange decodes tensor bytes [off, off+len(dst)) of a fetched frame;
// the handle stays valid until Release.
func DecodeRange(fh, off int64, dst []byte, gpu int, timeoutNs int64) error {
	ctx, cancel := callContext(nil, timeoutNs)
	defer cancel()
	return decodeRangeHandle(ctx, fh, off, dst, gpu)
}

func decodeRangeHandle(ctx context.Context, fh, off int64, dst []byte, gpu int) error {
	f, err := fetches.get(fh)
	if err != nil {
		return err
	}
	return decodeRange(ctx, f, off, dst, gpu)
}
