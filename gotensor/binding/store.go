package binding

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/node"
)

var (
	stores  = &table[*core.Store]{name: "store"}
	fetches = &table[*core.Fetched]{name: "fetch"}
	writers = &table[*writer]{name: "writer"}
)

type writer struct {
	*core.Writer
	gpu int
}

// Open opens a store and returns its handle.
func Open(url string) (int64, error) {
	s, err := core.Open(url)
	if err != nil {
		return 0, err
	}
	return stores.add(s), nil
}

// Close closes a store; its handle becomes invalid.
func Close(h int64) error {
	s, err := stores.take(h)
	if err != nil {
		return err
	}
	return s.Close()
}

// StoreOf returns the store behind a handle.
func StoreOf(h int64) (*core.Store, error) { return stores.get(h) }

// ParseMeta reads a dtype name and a comma-separated shape.
func ParseMeta(dtype, shape string) (tensor.Meta, error) {
	d, err := tensor.ParseDType(dtype)
	if err != nil {
		return tensor.Meta{}, err
	}
	s, err := tensor.ParseShape(shape)
	if err != nil {
		return tensor.Meta{}, err
	}
	return tensor.Meta{DType: d, Shape: s}, nil
}

// Write encodes and stores a tensor held in caller memory. gpu is the
// index of the GPU the tensor came from (its coding then runs on that
// GPU's local CPUs), or -1.
func Write(h int64, key string, raw []byte, dtype, shape, codecName string, gpu int) error {
	s, err := stores.get(h)
	if err != nil {
		return err
	}
	m, err := ParseMeta(dtype, shape)
	if err != nil {
		return err
	}
	return s.WriteTensor(gpuContext(gpu), key, m, raw, codecName)
}

// ReadInto decodes the tensor under key into dst after checking that it has
// the given dtype and shape; gpu as for Write (the tensor's destination).
func ReadInto(h int64, key string, dst []byte, dtype, shape string, gpu int) error {
	s, err := stores.get(h)
	if err != nil {
		return err
	}
	m, err := ParseMeta(dtype, shape)
	if err != nil {
		return err
	}
	return s.ReadTensor(gpuContext(gpu), key, m, dst)
}

// Fetch reads a frame and returns "handle;dtype;shape" so the caller can
// allocate the tensor and then call Decode.
func Fetch(h int64, key string) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	f, err := s.Fetch(context.Background(), key)
	if err != nil {
		return "", err
	}
	return fetchDesc(fetches.add(f), f), nil
}

func fetchDesc(fh int64, f *core.Fetched) string {
	return itoa(fh) + ";" + f.Header.Meta.DType.String() + ";" + tensor.FormatShape(f.Header.Meta.Shape)
}

// Decode decodes a fetched frame into dst and releases the fetch handle;
// gpu as for Write.
func Decode(fh int64, dst []byte, gpu int) error {
	f, err := fetches.take(fh)
	if err != nil {
		return err
	}
	defer f.Release()
	return f.DecodeInto(gpuContext(gpu), dst)
}

// gpuContext carries the pinning for work on a GPU's tensor.
func gpuContext(gpu int) context.Context {
	return core.WithPin(context.Background(), pinFor(gpu))
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
		f.Release()
	}
}

// Stat returns the stored tensor's description as JSON.
func Stat(h int64, key string) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	st, err := s.Stat(context.Background(), key)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	return string(b), err
}

func Delete(h int64, key string) error {
	s, err := stores.get(h)
	if err != nil {
		return err
	}
	return s.Delete(context.Background(), key)
}

func Exists(h int64, key string) (bool, error) {
	s, err := stores.get(h)
	if err != nil {
		return false, err
	}
	return s.Exists(context.Background(), key)
}

// Keys returns the keys under prefix, newline-separated (keys never hold
// a newline).
func Keys(h int64, prefix string) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	ks, err := s.Keys(context.Background(), prefix)
	return strings.Join(ks, "\n"), err
}

// Usage returns the store's URL and fill level as JSON.
func Usage(h int64) (string, error) {
	s, err := stores.get(h)
	if err != nil {
		return "", err
	}
	u := s.Usage()
	b, err := json.Marshal(map[string]any{"url": s.URL(), "keys": u.Keys, "bytes": u.Bytes, "capacity": u.Capacity})
	return string(b), err
}

// BeginWrite starts a streamed write (a tensor staged part by part, as
// from a GPU); WriterChunk tells the part alignment.
func BeginWrite(h int64, key, dtype, shape, codecName string, gpu int) (int64, error) {
	s, err := stores.get(h)
	if err != nil {
		return 0, err
	}
	m, err := ParseMeta(dtype, shape)
	if err != nil {
		return 0, err
	}
	w, err := s.BeginWrite(gpuContext(gpu), key, m, codecName)
	if err != nil {
		return 0, err
	}
	return writers.add(&writer{w, gpu}), nil
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
func CommitWrite(wh int64) error {
	w, err := writers.take(wh)
	if err != nil {
		return err
	}
	return w.Commit(context.Background())
}

// AbortWrite drops a streamed write.
func AbortWrite(wh int64) {
	if w, err := writers.take(wh); err == nil {
		w.Abort()
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
func DecodeRange(fh, off int64, dst []byte, gpu int) error {
	f, err := fetches.get(fh)
	if err != nil {
		return err
	}
	return f.DecodeRange(gpuContext(gpu), off, dst)
}

var servers = &table[*node.Node]{name: "server"}

// Serve starts a memory node in the background and returns its handle
// and URL as "handle;scheme://host:port".
func Serve(listen, kind string, capacity int64, dir, tokenFile, tlsCert, tlsKey string) (string, error) {
	s, err := node.Start(node.ServeOptions{Listen: listen, Transport: kind, Capacity: capacity, Dir: dir,
		TokenFile: tokenFile, TLSCert: tlsCert, TLSKey: tlsKey, CapHeap: true})
	if err != nil {
		return "", err
	}
	return itoa(servers.add(s)) + ";" + s.URL(), nil
}

// StopServe stops a memory node.
func StopServe(h int64) error {
	s, err := servers.take(h)
	if err != nil {
		return err
	}
	return s.Shutdown()
}
