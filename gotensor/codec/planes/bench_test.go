package planes

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/klauspost/compress/huff0"
)

func bf16Weights(n int) []byte { return testweights.NormalBF16(n, 1, 2) }

// One 1 MiB chunk on one core: the per-core speed of the codec itself.
func BenchmarkPlanesChunk(b *testing.B) {
	src := bf16Weights(512 << 10)
	in := codec.Info{Meta: tensor.Meta{DType: tensor.BFloat16, Shape: []int64{512 << 10}}}
	c := planes{}
	enc, _, _ := c.Encode(nil, src, in)
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		var buf []byte
		for b.Loop() {
			buf, _, _ = c.Encode(buf, src, in)
		}
	})
	dst := make([]byte, len(src))
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if err := c.Decode(dst, enc, in, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("split", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		p := newPlanes(2, len(src)/2)
		for b.Loop() {
			shuffle.Split(p, src, 2, true)
		}
	})
	b.Run("merge", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		p := newPlanes(2, len(src)/2)
		for b.Loop() {
			shuffle.Merge(dst, p, 2, true)
		}
	})
}

// The top plane of each real weight set (testweights.Sets) decoded as
// planes decodes it, 64 KiB blocks in 1 MiB chunks' planes, one core:
// MB/s of plane bytes; "pairs" is the share of blocks whose table suits
// the double-symbol decoder.
func BenchmarkTopPlaneDecode(b *testing.B) {
	names, sets := testweights.Sets(b)
	for _, set := range names {
		for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
			src := testweights.As(sets[set], d)
			k, rot := shuffle.Layout(d)
			chunk := (1 << 20) / k * k
			var encs [][]byte
			var plen []int
			pairs, blocks := 0, 0
			var he huffEnc
			var x2 huffX2
			for off := 0; off < len(src); off += chunk {
				c := src[off:min(off+chunk, len(src))]
				p := newPlanes(k, len(c)/k)
				shuffle.Split(p, c, k, rot)
				encs = append(encs, encodePlane(nil, p[0], nil, &he))
				plen = append(plen, len(p[0]))
				rest := encs[len(encs)-1]
				for rest != nil && len(rest) > 0 {
					mode, pay, after, _ := readBlock(rest)
					if mode == modeHuff0 {
						if _, ok, _ := x2.readTable(pay, huffMinPairs); ok {
							pairs++
						}
					}
					blocks++
					rest = after
				}
			}
			total := 0
			for _, n := range plen {
				total += n
			}
			b.Run(set+"/"+d.String(), func(b *testing.B) {
				var hs huff0.Scratch
				var x2a huffX2
				dst := make([]byte, 1<<20)
				b.SetBytes(int64(total))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu := testweights.ThreadCPU()
				for b.Loop() {
					for i, e := range encs {
						if _, err := decodePlane(dst[:plen[i]], e, &hs, &x2a); err != nil {
							b.Fatal(err)
						}
					}
				}
				testweights.ReportCPU(b, cpu, total)
				b.ReportMetric(float64(pairs)/float64(blocks), "pairs")
			})
		}
	}
}

// Small chunks (a KV cache's rows, one per chunk: 3 KiB to 48 KiB of
// float32 activations, and real float16 weights) coded and decoded by
// planes, one core: its blocks under huffMinX2Block decode through
// huff0's table ("chosen"), and through the double- or triple-symbol
// table as larger blocks do ("x2"); MB/s of tensor bytes.
func BenchmarkSmallChunks(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	w := testweights.Real(b)
	const rows = 8 // decoded in turns, as a read of a cache's rows does: no table is the last one built
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float16} {
		for _, n := range []int{768, 3072, 12288} {
			srcs := make([][]byte, rows)
			for k := range srcs {
				srcs[k] = make([]byte, n*d.Size())
				for i := 0; i < n; i++ {
					x := float32(r.NormFloat64() * 0.5) // activations
					if d == tensor.Float16 {
						x = w[(k*n+i)%len(w)]
					}
					testweights.Put(srcs[k], i, x, d)
				}
			}
			src := srcs[0]
			in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}}
			name := fmt.Sprintf("%s/%dKiB", d, len(src)>>10)
			b.Run(name+"/encode", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				var buf []byte
				for b.Loop() {
					buf, _, _ = planes{}.Encode(buf[:0], src, in)
				}
			})
			encs := make([][]byte, rows)
			for k := range encs {
				var err error
				if encs[k], _, err = (planes{}).Encode(nil, srcs[k], in); err != nil {
					b.Fatal(err)
				}
			}
			dst := make([]byte, len(src))
			for _, path := range []string{"chosen", "x2"} {
				b.Run(name+"/decode/"+path, func(b *testing.B) {
					if path == "x2" {
						defer func(m int) { huffMinX2Block = m }(huffMinX2Block)
						huffMinX2Block = 256
					}
					b.SetBytes(int64(len(src)))
					k := 0
					for b.Loop() {
						if err := (planes{}).Decode(dst, encs[k%rows], in, 0); err != nil {
							b.Fatal(err)
						}
						k++
					}
				})
			}
		}
	}
}
