// Package engine runs the decompression steps that hardware can take
// over: raw DEFLATE and LZ4 block, the streams NVIDIA DOCA Compress
// decodes on a BlueField. Software is the default; building with the tag
// doca adds an engine that offloads to a BlueField (see doca.go).
package engine

import (
	"bytes"
	"hash/adler32"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/errs"
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

var docaBuilt bool

// DOCABuilt reports whether this binary was built with the DOCA engine.
func DOCABuilt() bool { return docaBuilt }
