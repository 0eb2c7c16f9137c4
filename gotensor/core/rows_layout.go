package core

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A tensor that will be written a few rows at a time (a KV cache, one row
// per generated token) is best laid out in chunks of about that many rows:
// a row write re-encodes, and a store rewrites, the chunks it touches, so
// their size is its cost.

type chunkRowsKey struct{}

// WithChunkRows makes the whole-tensor writes under ctx lay their tensor
// out in chunks of n rows of its leading dimension (or the fewest whole
// rows that reach frame.MinChunkSize), for later row writes of about n
// rows; n <= 0, or a tensor of fewer than 2 dimensions, keeps the store's
// chunking. The store is told that the frames will be edited in place
// (store.WithRowEdits).
func WithChunkRows(ctx context.Context, n int64) context.Context {
	if n > 0 {
		ctx = store.WithRowEdits(ctx)
	}
	return context.WithValue(ctx, chunkRowsKey{}, n)
}

// rowChunkBytes is the chunk size WithChunkRows asks of a tensor of meta,
// 0 for none: n rows, rounded up to a multiple of 16 bytes within the
// frame's bounds (the frame then aligns it to whole rows).
func rowChunkBytes(ctx context.Context, meta tensor.Meta) int {
	n, _ := ctx.Value(chunkRowsKey{}).(int64)
	if n <= 0 || len(meta.Shape) < 2 {
		return 0
	}
	row := frame.RowBytes(meta)
	if row <= 0 || n > frame.MaxChunkSize/row {
		return 0
	}
	cs := min(max(n*row, frame.MinChunkSize), frame.MaxChunkSize)
	return int((cs + 15) &^ 15)
}
