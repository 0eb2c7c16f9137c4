package binding

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/core"
)

// The binding's only uses of core's decode calls; gpu as for Write. When
// core's decoders take a context (deadline and pin from ctx), each body
// becomes one call: f.DecodeInto(gpuContext(ctx, gpu), dst), and so on.

func decodeInto(ctx context.Context, f *core.Fetched, dst []byte, gpu int) error {
	return ctxError(ctx, f.DecodeIntoPinned(dst, pinFor(gpu)))
}

func decodeRange(ctx context.Context, f *core.Fetched, off int64, dst []byte, gpu int) error {
	return ctxError(ctx, f.DecodeRange(off, dst, pinFor(gpu)))
}

// release drops what a fetched frame holds once it is no longer needed
// (core's Fetched.Release, where core has it).
func release(f *core.Fetched) {}

// abort drops a streamed write that will not be committed (core's
// Writer.Abort, where core has it).
func abort(w *core.Writer) {}
