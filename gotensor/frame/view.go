package frame

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
)

// RawPayload is the frame's payload when it is the tensor's bytes as they
// are, read in place by a view: every chunk is stored raw (a codec-none
// frame, or one whose codec shrank no chunk). Otherwise, and for a frame
// not wholly at hand, it returns nil.
func (r *Reader) RawPayload() []byte {
	h := r.Header
	if r.src != nil || h.RawSize == 0 || h.PayloadSize() != h.RawSize {
		return nil
	}
	off := int64(h.Size())
	return r.at[off : off+h.RawSize : off+h.RawSize]
}

// Verify checks every chunk of a frame wholly at hand against its
// checksum, in parallel, decoding nothing: what a view does before it
// reads the frame in place.
func (r *Reader) Verify(ctx context.Context, pin parallel.Pin) error {
	h := r.Header
	if r.src != nil {
		return errs.New(errs.Internal, "verify of a frame not wholly at hand")
	}
	offs := make([]int64, len(h.Chunks)+1)
	offs[0] = int64(h.Size())
	for i, c := range h.Chunks {
		offs[i+1] = offs[i] + int64(c.EncLen)
	}
	return parallel.ForBytesPinned(len(h.Chunks), h.PayloadSize(), pin, func(i int) error {
		if ctx.Err() != nil {
			return ctxErr(ctx)
		}
		return h.CheckChunk(i, r.at[offs[i]:offs[i+1]])
	})
}
