// Package core joins the pipeline: a tensor's bytes are encoded by a codec
// into a frame, and the frame is kept by a store. Python (through gopy) and
// C (through cshared) both call this package.
package core

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/auto"
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
	caps   store.Caps  // what st can do beyond Store, asked once
	frames frame.Alloc // where whole frames are built
	Limits frame.Limits
	Frame  frame.Options

	stats *stats
	now   func() time.Time // the clock the stats time calls by
	auto  *auto.Chooser    // resolves codec specs; learns from every transfer
	heads heads            // parsed headers of the frames rows are written to
}

// Open opens the store a URL names (see store.Open).
func Open(url string) (*Store, error) {
	if frame.LimitsErr != nil {
		return nil, frame.LimitsErr
	}
	schemes.Register()
	st, err := store.Open(url)
	if err != nil {
		return nil, err
	}
	return Wrap(st), nil
}

// Wrap puts the tensor API over an open frame store. The largest tensor
// it decodes is frame.DefaultLimits' (GOTENSOR_MAX_TENSOR_BYTES); frames
// have chunks of whole rows where one fits (see WriteRows).
func Wrap(st store.Store) *Store {
	caps := st.Caps()
	s := &Store{
		st: st, caps: caps, frames: allocOf(caps), Limits: frame.DefaultLimits,
		Frame: frame.Options{AlignRows: true},
		stats: newStats(), now: time.Now,
	}
	s.auto = auto.New(st.URL(), proberOf(st, caps), auto.Defaults())
	return s
}

// proberOf is st where it is a store across a link, for the chooser to
// probe; else nil.
func proberOf(st store.Store, caps store.Caps) auto.Prober {
	if !caps.Streams() {
		return nil
	}
	return prober{st, caps.Stream}
}

type prober struct {
	store.Store
	store.StreamWriter
}

// Frames is the underlying frame store.
func (s *Store) Frames() store.Store { return s.st }

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

func (s *Store) options(ctx context.Context, meta tensor.Meta) frame.Options {
	opt := s.Frame
	opt.Pin = pinOf(ctx)
	opt.Limits = s.Limits
	opt.Stop = stopper(ctx)
	if n := rowChunkBytes(ctx, meta); n > 0 {
		opt.ChunkSize, opt.AlignRows = n, true
	}
	return opt
}

// allocOf is where whole frames are built: memory the store lends, when
// it recycles frames, else the heap.
func allocOf(caps store.Caps) frame.Alloc {
	if caps.Lender != nil {
		if caps.MapLender != nil { // codec-none frames where views map them
			return lentMappable{lent{caps.Lender}, caps.MapLender}
		}
		return lent{caps.Lender}
	}
	return frame.Heap
}

type lent struct{ store.Lender }

func (l lent) Get(n int) []byte { return l.LendFrame(n) }
func (l lent) Put(b []byte)     { l.ReturnFrame(b) }

type lentMappable struct {
	lent
	ml store.MapLender
}

func (l lentMappable) GetFrame(header, payload int) []byte { return l.ml.LendMappable(header, payload) }

// put stores a whole frame built in s.frames, coded or not (none),
// handing its memory back if the store refuses it. start is the time
// (s.now) the frame was ready; put returns the time the store was done
// with it.
func (s *Store) put(ctx context.Context, key string, f []byte, coded bool, start time.Time) (time.Time, error) {
	if err := commit(ctx); err != nil {
		s.frames.Put(f)
		return time.Time{}, err
	}
	s.auto.Begin(start)
	var err error
	if cl := s.caps.Checked; cl != nil { // f came from this process's frame writer
		err = cl.PutChecked(ctx, key, f)
	} else {
		err = s.st.Put(ctx, key, f)
	}
	end := s.now()
	if err != nil {
		s.auto.End(end, auto.ToStore, -1, coded)
		s.frames.Put(f)
		return time.Time{}, err
	}
	s.auto.End(end, auto.ToStore, int64(len(f)), coded)
	return end, nil
}

// WriteTensor encodes raw (the tensor's contiguous bytes) with the codec
// spec ("auto": see auto.Chooser.Choose) and stores the frame under key.
// raw is not retained.
func (s *Store) WriteTensor(ctx context.Context, key string, meta tensor.Meta, raw []byte, spec string) (err error) {
	defer func() { s.stats.op(OpWrite, err) }()
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	s.heads.drop(key, nil)
	start := s.now()
	streamed := s.streams(int64(len(raw)))
	cw, err := s.auto.Choose(ctx, spec, meta, raw, streamed)
	if err != nil {
		return err
	}
	var stored int64 // the frame's bytes, once written
	defer func() { cw.Done(stored, err) }()
	if streamed {
		stored, err = s.writeStreamed(ctx, key, meta, raw, cw.Codec, cw.Param, start)
		return err
	}
	w, err := frame.NewWriter(meta, cw.Codec, cw.Param, s.options(ctx, meta), s.frames)
	if err != nil {
		return err
	}
	f, err := w.Encode(raw)
	if err != nil {
		return err
	}
	encoded := s.now()
	end, err := s.put(ctx, key, f, cw.Codec.ID() != codec.IDNone, encoded)
	if err != nil {
		return err
	}
	stored = int64(len(f))
	s.stats.wrote(cw.Codec.Name(), int64(len(raw)), stored, encoded.Sub(start), end.Sub(encoded), end.Sub(start))
	return nil
}

// Writer writes a tensor into the store part by part (see frame.Writer:
// parts are whole chunks, in any order); nothing is visible under the key
// until Commit, and Abort drops it.
type Writer struct {
	s      *Store
	key    string
	codec  string
	c      codec.Codec
	start  time.Time
	encode atomic.Int64 // nanoseconds spent in WriteAt
	*frame.Writer
}

// WriteAt encodes one part (see frame.Writer.WriteAt).
func (w *Writer) WriteAt(part []byte, off int64) error {
	start := w.s.now()
	err := w.Writer.WriteAt(part, off)
	w.encode.Add(int64(w.s.now().Sub(start)))
	return err
}

// BeginWrite starts a write staged part by part. "auto" picks by dtype
// alone: the bytes are not there yet to sample.
func (s *Store) BeginWrite(ctx context.Context, key string, meta tensor.Meta, spec string) (*Writer, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	cw, err := s.auto.Choose(ctx, spec, meta, nil, false)
	if err != nil {
		return nil, err
	}
	w, err := frame.NewWriter(meta, cw.Codec, cw.Param, s.options(ctx, meta), s.frames)
	if err != nil {
		return nil, err
	}
	return &Writer{s: s, key: key, codec: cw.Codec.Name(), c: cw.Codec, start: s.now(), Writer: w}, nil
}

// Commit stores the frame once every part is written.
func (w *Writer) Commit(ctx context.Context) (err error) {
	defer func() { w.s.stats.op(OpWrite, err) }()
	start := w.s.now()
	f, err := w.Finish()
	if err != nil {
		return err
	}
	finished := w.s.now()
	encode := time.Duration(w.encode.Load()) + finished.Sub(start)
	end, err := w.s.put(ctx, w.key, f, w.c.ID() != codec.IDNone, finished)
	if err != nil {
		return err
	}
	w.s.stats.wrote(w.codec, w.RawSize(), int64(len(f)), encode, end.Sub(finished), end.Sub(w.start))
	return nil
}

// Fetched is a frame read from a store, header validated, not yet
// decoded. Release it when done: a store that leases frames keeps the
// frame's memory for it until then.
type Fetched struct {
	Header  *frame.Header
	r       *frame.Reader
	s       *Store
	key     string
	remote  bool // read piece by piece from a store across a link
	release func()
	once    sync.Once
	done    atomic.Bool  // released
	start   time.Time    // when the fetch began
	fetched time.Time    // when it ended (the first piece, from a store across a link)
	decoded atomic.Int64 // when the last decode ended, ns after start; 0: none yet
	read    auto.Read    // reported by Release
	size    int64        // the frame's stored bytes
	raw     atomic.Int64 // tensor bytes decoded
}

// Fetch reads the frame under key and validates its header. From a store
// across a link only the first piece is read now; the rest is fetched
// while it decodes.
func (s *Store) Fetch(ctx context.Context, key string) (f *Fetched, err error) {
	defer func() { s.stats.op(OpRead, err) }()
	start := s.now()
	read := s.auto.Read()
	if s.caps.Streams() {
		f, err = s.fetchStreamed(ctx, key, start)
	} else {
		f, err = s.fetchWhole(ctx, key, start)
	}
	if err != nil {
		read.Done(0, 0, 0, 0, false, 0)
		return nil, err
	}
	f.start, f.read = start, read
	return f, nil
}

// fetchWhole reads the whole frame, a transfer that begins at start.
func (s *Store) fetchWhole(ctx context.Context, key string, start time.Time) (*Fetched, error) {
	s.auto.Begin(start)
	if l := s.caps.Leaser; l != nil {
		b, release, err := l.Lease(ctx, key)
		end := s.moved(int64(len(b)), start, err)
		if err != nil {
			return nil, err
		}
		f, err := s.fetched(key, b, int64(len(b)), end)
		if err != nil {
			release()
			return nil, err
		}
		f.release = release
		return f, nil
	}
	b, err := s.st.Get(ctx, key)
	end := s.moved(int64(len(b)), start, err)
	if err != nil {
		return nil, err
	}
	f, err := s.fetched(key, b, int64(len(b)), end)
	if rc := s.caps.Recycler; rc != nil { // the frame is ours alone: its memory serves the next
		if err != nil {
			rc.RecycleRange(b)
			return nil, err
		}
		f.release = func() { rc.RecycleRange(b) }
	}
	return f, err
}

// moved ends a transfer begun (auto.Begin) at start that brought n bytes
// of a frame from the store before decoding began, counted in the stats
// when it succeeded. It returns the time it ended.
func (s *Store) moved(n int64, start time.Time, err error) time.Time {
	end := s.now()
	s.auto.End(end, auto.FromStore, n, false)
	if err == nil {
		s.stats.fetched(n, end.Sub(start))
	}
	return end
}

// fetched is the Fetched of frame b (the whole frame, or its first
// piece) of size bytes, which arrived at end.
func (s *Store) fetched(key string, b []byte, size int64, end time.Time) (*Fetched, error) {
	r, err := frame.NewReader(b, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	s.stats.read(size, 0)
	return &Fetched{Header: r.Header, r: r, s: s, key: key, size: size, fetched: end}, nil
}

// DecodeInto decodes the fetched tensor into dst (exactly its byte size);
// workers are pinned as ctx says (WithPin).
func (f *Fetched) DecodeInto(ctx context.Context, dst []byte) error {
	if int64(len(dst)) != f.Header.RawSize {
		return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor has %d", len(dst), f.Header.RawSize)
	}
	return f.DecodeRange(ctx, 0, dst)
}

// DecodeRange decodes the tensor bytes [off, off+len(dst)), which must be
// whole chunks (Header.ChunkSize), into dst. A frame read piece by piece
// that changes under it (another writer replaced it), or whose piece
// arrives damaged, is read again whole once.
func (f *Fetched) DecodeRange(ctx context.Context, off int64, dst []byte) error {
	return f.decodeRange(ctx, off, dst, f.s.now())
}

// decodeRange is DecodeRange begun at start.
func (f *Fetched) decodeRange(ctx context.Context, off int64, dst []byte, start time.Time) error {
	if f.done.Load() {
		return errs.ForKey(errs.InvalidArgument, f.key, "key %q: fetched frame decoded after Release", f.key)
	}
	err := f.r.DecodeRange(ctx, off, dst, pinOf(ctx))
	if f.remote && errs.Is(err, errs.CorruptData) {
		err = f.decodeCurrent(ctx, off, dst)
	}
	if err == nil {
		end := f.s.now()
		f.s.stats.decoded(int64(len(dst)), end.Sub(start))
		f.decoded.Store(max(int64(end.Sub(f.start)), 1))
		f.raw.Add(int64(len(dst)))
	}
	return wrapKey(err, f.key)
}

// decodeCurrent reads the whole current frame and decodes from it.
func (f *Fetched) decodeCurrent(ctx context.Context, off int64, dst []byte) error {
	start := f.s.now()
	f.s.auto.Begin(start)
	b, err := f.s.st.Get(ctx, f.key)
	f.s.moved(int64(len(b)), start, err)
	if err != nil {
		return err
	}
	r, err := frame.NewReader(b, f.s.Limits)
	if err != nil {
		return err
	}
	if !r.Header.Meta.Equal(f.Header.Meta) {
		return errs.ForKey(errs.InvalidArgument, f.key, "key %q was replaced by a %s%v tensor while it was read", f.key, r.Header.Meta.DType, r.Header.Meta.Shape)
	}
	return r.DecodeRange(ctx, off, dst, pinOf(ctx))
}

// Release lets the store reuse the fetched frame's memory. Idempotent;
// the Fetched must not be decoded afterwards. A fetch that was decoded
// counts as a read from its start to its last decode.
func (f *Fetched) Release() {
	f.once.Do(func() {
		f.done.Store(true)
		var whole time.Duration // the read's time where it decoded the whole tensor
		if d := f.decoded.Load(); d > 0 {
			f.s.stats.read(0, time.Duration(d))
			if f.raw.Load() == f.Header.RawSize {
				whole = time.Duration(d)
			}
		}
		h := f.Header
		f.read.Done(h.Meta.DType, h.Codec, h.RawSize, f.size, f.s.streams(h.RawSize), whole)
		if f.release != nil {
			f.release()
		}
	})
}

// ReadTensor decodes the tensor under key into dst after checking that it
// has the dtype and shape the caller expects.
func (s *Store) ReadTensor(ctx context.Context, key string, want tensor.Meta, dst []byte) error {
	f, err := s.Fetch(ctx, key)
	if err != nil {
		return err
	}
	defer f.Release()
	if !f.Header.Meta.Equal(want) {
		return errs.ForKey(errs.InvalidArgument, key, "key %q holds %s%v, destination is %s%v",
			key, f.Header.Meta.DType, f.Header.Meta.Shape, want.DType, want.Shape)
	}
	return f.DecodeFetched(ctx, dst)
}

// DecodeFetched is DecodeInto called as soon as Fetch returned: the
// decode is timed from the fetch's end rather than by another reading of
// the clock.
func (f *Fetched) DecodeFetched(ctx context.Context, dst []byte) error {
	if int64(len(dst)) != f.Header.RawSize {
		return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor has %d", len(dst), f.Header.RawSize)
	}
	return f.decodeRange(ctx, 0, dst, f.fetched)
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
func (s *Store) Stat(ctx context.Context, key string) (st *Stat, err error) {
	defer func() { s.stats.op(OpStat, err) }()
	return s.Describe(ctx, key)
}

// Describe is Stat for a call that needs the header on its way (a row read
// learning the rows' dtype and shape): it is not counted as a stat.
func (s *Store) Describe(ctx context.Context, key string) (*Stat, error) {
	s.auto.Begin(s.now())
	b, size, err := s.st.Head(ctx, key, frame.HeadGuess)
	s.auto.End(s.now(), auto.FromStore, int64(len(b)), false)
	if err != nil {
		return nil, err
	}
	h, _, err := frame.ParseHead(b, size, func(n int64) ([]byte, error) {
		b, _, err := s.st.Head(ctx, key, int(n))
		return b, err
	}, s.Limits)
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

func (s *Store) Delete(ctx context.Context, key string) error {
	s.heads.drop(key, nil)
	err := commit(ctx)
	if err == nil {
		err = s.st.Delete(ctx, key)
	}
	s.stats.op(OpDelete, err)
	return err
}

func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	s.auto.Begin(s.now())
	ok, err := s.st.Has(ctx, key)
	s.auto.End(s.now(), auto.FromStore, 0, false)
	s.stats.op(OpExists, err)
	return ok, err
}

func (s *Store) Keys(ctx context.Context, prefix string) ([]string, error) {
	ks, err := s.st.List(ctx, prefix)
	s.stats.op(OpKeys, err)
	return ks, err
}

func (s *Store) Usage() store.Usage { return s.st.Usage() }

func (s *Store) URL() string { return s.st.URL() }

func (s *Store) Close() error { return s.st.Close() }

func wrapKey(err error, key string) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*errs.Error); ok {
		return &errs.Error{Kind: e.Kind, Msg: "key " + quote(key) + ": " + e.Msg, Err: e.Err, Key: key}
	}
	return err
}

func quote(s string) string { return "\"" + s + "\"" }

// ctxErr is the typed error for a context that is done.
func ctxErr(ctx context.Context) error {
	return errs.Wrap(errs.Timeout, ctx.Err(), "write stopped")
}
