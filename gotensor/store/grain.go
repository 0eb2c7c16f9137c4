package store

import (
	"context"
	"io"
)

// A file system with large folios (xfs; ext4 on recent kernels) keeps a
// file in the page cache in folios as large as the writes that made it, up
// to 2 MiB, and a small write into a folio costs time in proportion to the
// folio (ext4 walks its buffer heads: a 1.5 KiB pwrite takes ~10 us in a
// 2 MiB folio, ~0.6 us in a 64 KiB one). A frame that will be edited a few
// rows at a time is therefore written in pieces of at most EditGrain
// bytes, which keeps its folios, and so every later edit, small.

// EditGrain is the largest write a Dir makes a file marked WithRowEdits of.
const EditGrain = 64 << 10

type rowEditsKey struct{}

// WithRowEdits marks the frames put under ctx as ones that will be edited
// in place a few rows at a time (a KV cache); stores that lay files out
// for that (Dir) do so.
func WithRowEdits(ctx context.Context) context.Context {
	return context.WithValue(ctx, rowEditsKey{}, true)
}

// RowEdits reports whether ctx is marked WithRowEdits.
func RowEdits(ctx context.Context) bool {
	v, _ := ctx.Value(rowEditsKey{}).(bool)
	return v
}

// writeIn writes b to w in writes of at most grain bytes (all of it at
// once for grain <= 0).
func writeIn(w io.Writer, b []byte, grain int) error {
	if grain <= 0 {
		_, err := w.Write(b)
		return err
	}
	for len(b) > 0 {
		n := min(len(b), grain)
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
