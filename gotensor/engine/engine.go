// Package engine runs the steps that hardware can take over: raw DEFLATE
// and LZ4 block decompression and raw DEFLATE compression, the streams
// NVIDIA DOCA Compress handles on a BlueField. Software is the default;
// building with the tag doca adds an engine that offloads to a BlueField
// (see doca.go; the tags 'doca fakedoca' build it against a software fake).
package engine

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/adler32"
)

// Engine decompresses chunks. Implementations are safe for concurrent use.
type Engine interface {
	Name() string
	// Inflate decodes a raw DEFLATE stream that must fill dst exactly and
	// returns the Adler-32 of the result.
	Inflate(dst, src []byte) (adler uint32, err error)
	// LZ4Block decodes an LZ4 block that must fill dst exactly.
	LZ4Block(dst, src []byte) error
}

var current atomic.Value // holds engineBox

type engineBox struct{ Engine }

func init() { current.Store(engineBox{Software{}}) }

// Current is the engine codecs use.
func Current() Engine { return current.Load().(engineBox).Engine }

// Use makes e the engine codecs use.
func Use(e Engine) { current.Store(engineBox{e}) }

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

// Software is the pure-Go engine.
type Software struct{}

func (Software) Name() string { return "software" }

var readers sync.Pool // flate readers (io.ReadCloser + flate.Resetter)

func (Software) Inflate(dst, src []byte) (uint32, error) {
	br := bytes.NewReader(src)
	r, _ := readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(br)
	} else if err := r.(flate.Resetter).Reset(br, nil); err != nil {
		return 0, corrupt("deflate: %v", err)
	}
	defer readers.Put(r)
	if _, err := io.ReadFull(r, dst); err != nil {
		return 0, corrupt("deflate: stream ended early: %v", err)
	}
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		if n != 0 {
			return 0, corrupt("deflate: stream holds more than %d bytes", len(dst))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, corrupt("deflate: %v", err)
		}
	}
	if br.Len() != 0 {
		return 0, corrupt("deflate: %d bytes after the end of the stream", br.Len())
	}
	return adler32.Checksum(dst), nil
}

func (Software) LZ4Block(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return corrupt("lz4: %v", err)
	}
	if n != len(dst) {
		return corrupt("lz4: block decoded to %d bytes, want %d", n, len(dst))
	}
	return nil
}

// Compressor is an Engine that can also compress raw DEFLATE.
type Compressor interface {
	// Deflate compresses src as one raw DEFLATE stream appended to dst[:0],
	// with the Adler-32 of src; ok is false when it did not.
	Deflate(dst, src []byte) (out []byte, adler uint32, ok bool)
}

// Deflate compresses src on the current engine when it can (a BlueField-2
// through DOCA); ok false means the caller compresses in software.
func Deflate(dst, src []byte) (out []byte, adler uint32, ok bool) {
	if c, is := Current().(Compressor); is {
		return c.Deflate(dst, src)
	}
	return nil, 0, false
}

// MaxChunk is the largest chunk the current engine offloads in one task
// (0: no limit). A frame whose chunks exceed it is decoded in software.
func MaxChunk() int {
	if m, is := Current().(interface{ MaxChunk() int }); is {
		return m.MaxChunk()
	}
	return 0
}

var (
	docaBuilt  bool
	docaStatus atomic.Value // holds docaState
)

type docaState struct {
	msg  string
	err  error
	live func() string // the engine's own report while it runs
}

// DOCABuilt reports whether this binary was built with the DOCA engine.
func DOCABuilt() bool { return docaBuilt }

func setDOCAStatus(msg string, err error) {
	if err != nil {
		msg = err.Error()
	}
	docaStatus.Store(docaState{msg: msg, err: err})
}

// DOCAStatus says whether the DOCA engine runs: what it offloads, or why
// not, with the typed error (Unavailable, Unsupported) when opening failed.
func DOCAStatus() (string, error) {
	if !docaBuilt {
		return "not built (build with -tags doca)", nil
	}
	st, _ := docaStatus.Load().(docaState)
	if st.live != nil {
		return st.live(), nil
	}
	return st.msg, st.err
}
