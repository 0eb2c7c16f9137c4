//go:build ucx

package ucx_test

import (
	"testing"
)

// BenchmarkUCXRoundTrip4KiB: one 4 KiB get at a time (GOTENSOR_UCX_SPIN_US
// sets how long each worker polls before it sleeps).
func BenchmarkUCXRoundTrip4KiB(b *testing.B) {
	for _, c := range ucxCases {
		b.Run(c.name, func(b *testing.B) {
			s, mem := startUCX(b, c.tls, "", 0)
			mem.Put(ctx, "k", make([]byte, 4096))
			cl := dialUCX(b, s.Addr(), c.tls, "")
			for b.Loop() {
				if _, err := cl.Get(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
