// Package core joins the pipeline: a tensor's bytes are encoded by a codec
// into a frame, and the frame is kept by a store. Python (through gopy) and
// C (through cshared) both call this package.
package core

import (
	"context"
	"os"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
)

// Version is the gotensor release.
const Version = "0.1.0"

// Store writes and reads tensors through a frame store.
type Store struct {
	st     store.Store
	Limits frame.Limits
	Frame  frame.Options
}

// Open opens the store a URL names (see store.Open).
func Open(url string) (*Store, error) {
	schemes.Register()
	st, err := store.Open(url)
	if err != nil {
		return nil, err
	}
	return Wrap(st), nil
}

// Wrap puts the tensor API over an open frame store. The largest tensor
// it decodes is frame.DefaultLimits', or GOTENSOR_MAX_TENSOR_BYTES ("64GiB").
func Wrap(st store.Store) *Store {
	lim := frame.DefaultLimits
	if v := os.Getenv("GOTENSOR_MAX_TENSOR_BYTES"); v != "" {
		if n, err := store.ParseSize(v); err == nil && n > 0 {
			lim.MaxRawBytes = n
		}
	}
	return &Store{st: st, Limits: lim}
}

// Frames is the underlying frame store.
func (s *Store) Frames() store.Store { return s.st }

// WriteTensor encodes raw (the tensor's contiguous bytes) with the named
// codec and stores the frame under key. raw is not retained.
func (s *Store) WriteTensor(ctx context.Context, key string, meta tensor.Meta, raw []byte, codecName string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if int64(len(raw)) >= StreamMin && store.Streams(s.st) {
		return s.writeStreamed(ctx, s.st.(store.Streamer), key, meta, raw, codecName)
	}
	f, err := s.encode(meta, raw, codecName, pinOf(ctx))
	if err != nil {
		return err
	}
	return s.st.Put(ctx, key, f)
}

type pinKey struct{}

// WithPin returns a context under which coding workers are pinned by pin
// (binding uses it to keep a GPU tensor's work on the GPU's local CPUs).
func WithPin(ctx context.Context, pin parallel.Pin) context.Context {
	if pin == nil {
		return ctx
	}
	return context.WithValue(ctx, pinKey{}, pin)
}

func pinOf(ctx context.Context) parallel.Pin {
	p, _ := ctx.Value(pinKey{}).(parallel.Pin)
	return p
}

// Encode builds the frame for a tensor. spec is a codec name with optional
// parameters ("q4:group=64,dim=2"), or "auto" to let codec.Choose pick.
func (s *Store) Encode(meta tensor.Meta, raw []byte, spec string) ([]byte, error) {
	return s.encode(meta, raw, spec, nil)
}

func (s *Store) encode(meta tensor.Meta, raw []byte, spec string, pin parallel.Pin) ([]byte, error) {
	opt := s.Frame
	opt.Pin = pin
	if spec == "auto" {
		return frame.EncodeWith(meta, raw, codec.Choose(meta, raw), 0, opt)
	}
	return frame.Encode(meta, raw, spec, opt)
}

// Writer streams a tensor into the store part by part (see
// frame.Encoder); nothing is visible under the key until Commit.
type Writer struct {
	s   *Store
	key string
	*frame.Encoder
}

// BeginWrite starts a streamed write. "auto" picks by dtype alone (planes
// for floats, else none): the bytes are not there yet to sample.
func (s *Store) BeginWrite(ctx context.Context, key string, meta tensor.Meta, spec string) (*Writer, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if spec == "auto" {
		spec = "none"
		if c, _ := codec.ByName("planes"); c.Supports(meta.DType) {
			spec = "planes"
		}
	}
	opt := s.Frame
	opt.Pin = pinOf(ctx)
	e, err := frame.NewEncoder(meta, spec, opt)
	if err != nil {
		return nil, err
	}
	return &Writer{s: s, key: key, Encoder: e}, nil
}

// Commit stores the frame once every part is written.
func (w *Writer) Commit(ctx context.Context) error {
	f, err := w.Finish()
	if err != nil {
		return err
	}
	return w.s.st.Put(ctx, w.key, f)
}

// Fetched is a frame read from a store, header validated, not yet decoded.
type Fetched struct {
	Header *frame.Header
	frame  []byte
	pin    parallel.Pin
	src    *streamSrc // set when the frame is still in the store, read piece by piece
}

// Fetch reads the frame under key and validates its header.
func (s *Store) Fetch(ctx context.Context, key string) (*Fetched, error) {
	if store.Streams(s.st) {
		return s.fetchStreamed(ctx, s.st.(store.Streamer), key)
	}
	f, err := s.st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	h, err := frame.ParseHeader(f, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	return &Fetched{Header: h, frame: f, pin: pinOf(ctx)}, nil
}

// DecodeInto decodes the fetched tensor into dst (exactly its byte size).
func (f *Fetched) DecodeInto(dst []byte) error {
	return f.DecodeIntoPinned(dst, f.pin)
}

// DecodeRange decodes the tensor bytes [off, off+len(dst)), which must be
// whole chunks (Header.ChunkSize), into dst.
func (f *Fetched) DecodeRange(off int64, dst []byte, pin parallel.Pin) error {
	if f.src != nil {
		return f.decodeStreamed(off, dst, pin)
	}
	return frame.DecodeRange(f.Header, f.frame, off, dst, pin)
}

// DecodeIntoPinned is DecodeInto with its workers pinned by pin.
func (f *Fetched) DecodeIntoPinned(dst []byte, pin parallel.Pin) error {
	if f.src != nil {
		if int64(len(dst)) != f.Header.RawSize {
			return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor has %d", len(dst), f.Header.RawSize)
		}
		return f.decodeStreamed(0, dst, pin)
	}
	return frame.DecodeWithHeader(f.Header, f.frame, dst, pin)
}

// ReadTensor decodes the tensor under key into dst after checking that it
// has the dtype and shape the caller expects.
func (s *Store) ReadTensor(ctx context.Context, key string, want tensor.Meta, dst []byte) error {
	f, err := s.Fetch(ctx, key)
	if err != nil {
		return err
	}
	if !f.Header.Meta.Equal(want) {
		return errs.New(errs.InvalidArgument, "key %q holds %s%v, destination is %s%v",
			key, f.Header.Meta.DType, f.Header.Meta.Shape, want.DType, want.Shape)
	}
	return wrapKey(f.DecodeInto(dst), key)
}

// Stat describes a stored tensor without decoding it.
type Stat struct {
	Key         string  `json:"key"`
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	RawBytes    int64   `json:"raw_bytes"`
	StoredBytes int64   `json:"stored_bytes"`
	Codec       string  `json:"codec"`
	Chunks      int     `json:"chunks"`
}

// Stat reads only the frame header.
func (s *Store) Stat(ctx context.Context, key string) (*Stat, error) {
	b, size, err := s.st.Head(ctx, key, 4096)
	if err != nil {
		return nil, err
	}
	n, err := frame.HeaderLen(b)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	if n > len(b) && int64(n) <= size {
		if b, _, err = s.st.Head(ctx, key, n); err != nil {
			return nil, err
		}
	}
	h, err := frame.ParseHeader(b, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	name := "unknown"
	if c, err := codec.ByID(h.Codec); err == nil {
		name = c.Name()
	}
	return &Stat{
		Key: key, DType: h.Meta.DType.String(), Shape: h.Meta.Shape,
		RawBytes: h.RawSize, StoredBytes: size, Codec: name, Chunks: len(h.Chunks),
	}, nil
}

func (s *Store) Delete(ctx context.Context, key string) error { return s.st.Delete(ctx, key) }

func (s *Store) Exists(ctx context.Context, key string) (bool, error) { return s.st.Has(ctx, key) }

func (s *Store) Keys(ctx context.Context, prefix string) ([]string, error) {
	return s.st.List(ctx, prefix)
}

func (s *Store) Usage() store.Usage { return s.st.Usage() }

func (s *Store) URL() string { return s.st.URL() }

func (s *Store) Close() error { return s.st.Close() }

func wrapKey(err error, key string) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*errs.Error); ok {
		return &errs.Error{Kind: e.Kind, Msg: "key " + quote(key) + ": " + e.Msg, Err: e.Err}
	}
	return err
}

func quote(s string) string { return "\"" + s + "\"" }
