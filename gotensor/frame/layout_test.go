package frame

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A half-megabyte tensor is worth two workers for planes (a Spread codec)
// but not for none; shrunk chunks come out equal, with no small last one.
func TestChunkSizeSpreadsSlowCodecs(t *testing.T) {
	parallel.SetWorkers(2)
	defer parallel.SetWorkers(0)
	const stories = 2 * 264128 // stories260K as bfloat16: 528,256 bytes
	for _, tc := range []struct {
		codec  string
		raw    int64
		chunks int64
	}{
		{"planes", stories, 2}, // two equal chunks, not 256 KiB twice and 3,968 bytes
		{"none", stories, 1},   // not worth a second worker
		{"shuffle-deflate", stories, 2},
		{"planes", 400 << 10, 1}, // under planes' 512 KiB
		{"planes", 3 << 20, 8},   // four chunks a worker once they are over 256 KiB
		{"none", 3<<20 + 160, 8}, // other codecs: four chunks a worker
	} {
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{tc.raw / 2}}
		c, err := codec.ByName(tc.codec)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := chunkSize(c, codec.Info{Meta: meta}, tc.raw, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := (tc.raw + cs - 1) / cs
		if last := tc.raw - (n-1)*cs; n != tc.chunks || n > 1 && last < cs-16*n {
			t.Errorf("%s, %d bytes: %d chunks of %d, the last %d; want %d equal ones", tc.codec, tc.raw, n, cs, last, tc.chunks)
		}
	}
}
