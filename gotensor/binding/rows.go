package binding

import (
	"context"
	"fmt"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
)

// WriteRows stores raw, a tensor of dtype and shape, as rows [start,
// start+shape[0]) of the tensor under key (see core.Store.WriteRows), in
// key's order; gpu as for Write.
func WriteRows(h int64, key string, start int64, raw []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	return writeRows(ctx, s, key, start, raw, dtype, shape, gpu)
}

func writeRows(ctx context.Context, s *openStore, key string, start int64, raw []byte, dtype int64, shape []int64, gpu int) error {
	m, err := NewMeta(dtype, shape)
	if err != nil {
		return err
	}
	return ctxError(ctx, s.WriteRows(gpuContext(ctx, gpu), key, start, m, raw))
}

// ReadRows decodes rows [start, start+shape[0]) of the tensor under key
// into dst; dtype and shape are the rows'. dst's whole 2 MiB pages are
// advised huge first (see adviseHugePages).
func ReadRows(h int64, key string, start int64, dst []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	return readRows(ctx, s, key, start, dst, dtype, shape, gpu)
}

func readRows(ctx context.Context, s *openStore, key string, start int64, dst []byte, dtype int64, shape []int64, gpu int) error {
	m, err := NewMeta(dtype, shape)
	if err != nil {
		return err
	}
	adviseHugePages(dst)
	return ctxError(ctx, s.ReadRows(gpuContext(ctx, gpu), key, start, m, dst))
}

// WorkCounters reports frame.Work as JSON {"encoded", "decoded"}: the raw
// bytes this process has encoded and decoded.
func WorkCounters() string {
	return fmt.Sprintf(`{"encoded": %d, "decoded": %d}`, frame.Work.Encoded.Load(), frame.Work.Decoded.Load())
}

// WriteForRows is Write of a tensor that will be written a few rows at a
// time: its chunks hold chunkRows rows each (see core.WithChunkRows), so a
// later WriteRows of that many rows re-encodes only those.
func WriteForRows(h int64, key string, raw []byte, dtype int64, shape []int64, codecName string, chunkRows int64, gpu int, timeoutNs int64) error {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return err
	}
	defer cancel()
	if err := checkChunkRows(chunkRows, shape); err != nil {
		return err
	}
	return write(core.WithChunkRows(ctx, chunkRows), s, key, raw, dtype, shape, codecName, gpu)
}

// checkChunkRows refuses a layout by rows for a tensor without rows to lay
// out (fewer than 2 dimensions), or a negative row count.
func checkChunkRows(n int64, shape []int64) error {
	if n < 0 {
		return errs.New(errs.InvalidArgument, "chunk_rows %d: want a positive row count", n)
	}
	if n > 0 && len(shape) < 2 {
		return errs.New(errs.InvalidArgument, "chunk_rows needs a tensor of 2 or more dimensions (rows of the first); this one has %d", len(shape))
	}
	return nil
}

// StartWriteRows is WriteRows on a goroutine; raw and shape must stay
// valid until completion.
func StartWriteRows(h int64, key string, start int64, raw []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		return writeRows(ctx, s, key, start, raw, dtype, shape, gpu)
	})
}

// StartReadRows is ReadRows on a goroutine.
func StartReadRows(h int64, key string, start int64, dst []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		return readRows(ctx, s, key, start, dst, dtype, shape, gpu)
	})
}

// StartWriteForRows is WriteForRows on a goroutine; raw and shape must stay
// valid until completion.
func StartWriteForRows(h int64, key string, raw []byte, dtype int64, shape []int64, codecName string, chunkRows int64, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		if err := checkChunkRows(chunkRows, shape); err != nil {
			return err
		}
		return write(core.WithChunkRows(ctx, chunkRows), s, key, raw, dtype, shape, codecName, gpu)
	})
}
