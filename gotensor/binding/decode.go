package binding

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/core"
)

// The binding's only uses of core's decode calls; gpu as for Write (the
// pin travels in ctx).

func decodeInto(ctx context.Context, f *core.Fetched, dst []byte, gpu int) error {
	return ctxError(ctx, f.DecodeInto(gpuContext(ctx, gpu), dst))
}

// decodeFetched is decodeInto right after the fetch (core.DecodeFetched).
func decodeFetched(ctx context.Context, f *core.Fetched, dst []byte, gpu int) error {
	return ctxError(ctx, f.DecodeFetched(gpuContext(ctx, gpu), dst))
}

func decodeRange(ctx context.Context, f *core.Fetched, off int64, dst []byte, gpu int) error {
	return ctxError(ctx, f.DecodeRange(gpuContext(ctx, gpu), off, dst))
}

// release drops what a fetched frame holds once it is no longer needed.
func release(f *core.Fetched) { f.Release() }

// abort drops a streamed write that will not be committed.
func abort(w *core.Writer) { w.Abort() }
