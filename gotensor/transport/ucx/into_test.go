//go:build ucx

package ucx_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

// A range read into the caller's memory (GetRangeInto) lands there straight
// from UCX, with no buffer of the client's own; a caller that gives up
// while it arrives gets its typed error only once nothing can write that
// memory any more.
func TestUCXRangeIntoCallerMemory(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "", 0)
		c := dialUCX(t, s.Addr(), tls, "")
		const n = 64 << 20
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 7)
		}
		if err := c.Put(ctx, "k", src); err != nil {
			t.Fatal(err)
		}

		var fills atomic.Int32
		restore := ucx.OnFill(func() { fills.Add(1) }, 250*time.Millisecond)
		dst := make([]byte, n-4096)
		got, total, err := c.GetRangeInto(ctx, "k", 4096, dst)
		if err != nil || got != len(dst) || total != n || !bytes.Equal(dst, src[4096:]) {
			t.Fatalf("range into dst: %d of %d bytes, %v (equal: %v)", got, total, err, bytes.Equal(dst, src[4096:]))
		}
		if fills.Load() != 1 {
			t.Fatalf("%d payloads received into dst, want 1", fills.Load())
		}
		small := make([]byte, 100) // eager: copied there
		if got, _, err := c.GetRangeInto(ctx, "k", 1, small); err != nil || got != 100 || !bytes.Equal(small, src[1:101]) {
			t.Fatalf("small range: %d, %v", got, err)
		}
		restore()

		// The caller gives up as the payload starts to arrive.
		for _, tc := range []struct {
			name  string
			grace time.Duration
			ends  bool // the connection ends
		}{{"waited for", time.Minute, false}, {"cut short", 0, true}} {
			t.Run(tc.name, func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				giveUp, release := cancel, func() {}
				defer func() { release() }()
				if tc.ends { // the rest cannot arrive in time: the node's worker is held
					giveUp = func() { release = ucx.StallServer(s); cancel() }
				}
				restore := ucx.OnFill(giveUp, tc.grace)
				defer restore()
				before := ucx.ConnOf(c)
				dst := bytes.Repeat([]byte{0x11}, n)
				_, _, err := c.GetRangeInto(cctx, "k", 0, dst)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want Canceled", err)
				}
				if k := ucx.OpsInFlight(c); k != 0 {
					t.Fatalf("%d operations still in flight once the call returned", k)
				}
				seen := bytes.Clone(dst)
				time.Sleep(100 * time.Millisecond) // time for the rest to arrive, were anything still receiving it
				if !bytes.Equal(seen, dst) {
					t.Fatal("the caller's memory was written after the call returned")
				}
				// over sm the client copies from the node's memory itself (CMA), so it may finish
				if ended := ucx.ConnOf(c) != before; ended && !tc.ends || !ended && tc.ends && tls == "tcp" {
					t.Fatalf("connection ended: %v, want %v", ended, tc.ends)
				}
				restore()
				release()
				if got, _, err := c.GetRangeInto(ctx, "k", 0, make([]byte, 1<<20)); err != nil || got != 1<<20 {
					t.Fatalf("the next call: %d, %v", got, err)
				}
			})
		}
	})
}
