package deflate

import (
	"bytes"
	stdflate "compress/flate"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// stdInflate is the reference: Go's compress/flate.
func stdInflate(src []byte, n int) ([]byte, error) {
	out, err := io.ReadAll(stdflate.NewReader(bytes.NewReader(src)))
	if err == nil && len(out) != n {
		return out, io.ErrUnexpectedEOF
	}
	return out, err
}

func stdDeflate(t testing.TB, src []byte, level int) []byte {
	var b bytes.Buffer
	w, err := stdflate.NewWriter(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(src)
	w.Close()
	return b.Bytes()
}

// The literal decoder reads what shuffle-deflate writes, and agrees with
// compress/flate on streams of literal and stored blocks from other
// encoders; streams with matches it leaves to the general inflater.
func TestInflateLiteralsMatchesFlate(t *testing.T) {
	softwareEngine(t) // a device's DEFLATE writes matches
	r := rand.New(rand.NewPCG(31, 32))
	var lt literalTables
	for it := 0; it < 60; it++ {
		d := []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32, tensor.Float64}[it%4]
		n := 1 + r.IntN(200000)
		src := make([]byte, n*d.Size())
		for i := 0; i < n; i++ {
			testweights.Put(src, i, float32(r.NormFloat64()*0.05), d)
		}
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}}
		enc, _, err := shuffleDeflate{}.Encode(nil, src, in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := stdInflate(enc, len(src))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(src))
		if !inflateLiterals(got, enc, &lt) || !bytes.Equal(got, want) {
			t.Fatalf("it %d %v n %d: shuffle-deflate stream not decoded like compress/flate", it, d, n)
		}
		for _, level := range []int{stdflate.HuffmanOnly, stdflate.NoCompression, stdflate.BestSpeed} {
			s := stdDeflate(t, src, level)
			got := make([]byte, len(src))
			ok := inflateLiterals(got, s, &lt)
			if ok && !bytes.Equal(got, src) {
				t.Fatalf("it %d level %d: decoded wrong bytes", it, level)
			}
			if !ok && level != stdflate.BestSpeed {
				t.Fatalf("it %d level %d: literal-only stream refused", it, level)
			}
		}
	}
	// matches: refused, never decoded wrong
	rep := bytes.Repeat([]byte("gotensor planes "), 5000)
	s := stdDeflate(t, rep, stdflate.BestSpeed)
	if inflateLiterals(make([]byte, len(rep)), s, &lt) {
		t.Fatal("a stream with matches was taken by the literal decoder")
	}
}

// softwareEngine makes the software engine current for t: the streams
// under test are the ones gotensor's own encoder writes.
func softwareEngine(t testing.TB) {
	prev := engine.Current()
	engine.Use(engine.Software{})
	t.Cleanup(func() { engine.Use(prev) })
}

// Truncated, extended and corrupted streams never panic, and whatever the
// literal decoder accepts compress/flate decodes to the same bytes.
func FuzzInflateLiterals(f *testing.F) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float32} {
		n := 3000
		src := make([]byte, n*d.Size())
		for i := 0; i < n; i++ {
			testweights.Put(src, i, float32(r.NormFloat64()), d)
		}
		enc, _, _ := shuffleDeflate{}.Encode(nil, src, codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}})
		f.Add(enc, uint16(len(src)), uint32(0))
		f.Add(enc, uint16(len(src)), uint32(len(enc)/2)<<8|0x10)
		f.Add(enc[:len(enc)-3], uint16(len(src)), uint32(0))
		f.Add(stdDeflate(f, src, stdflate.HuffmanOnly), uint16(len(src)), uint32(7)<<8|1)
		f.Add(stdDeflate(f, src[:1000], stdflate.NoCompression), uint16(1000), uint32(3)<<8|0x80)
	}
	f.Fuzz(func(t *testing.T, stream []byte, size uint16, flip uint32) {
		s := bytes.Clone(stream)
		if i := int(flip >> 8); len(s) > 0 && flip&0xFF != 0 {
			s[i%len(s)] ^= byte(flip)
		}
		var lt literalTables
		got := make([]byte, size)
		if !inflateLiterals(got, s, &lt) {
			return
		}
		want, err := stdInflate(s, int(size))
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("decoded %d bytes differently from compress/flate", size)
		}
	})
}

// A shuffle-deflate chunk from another encoder (LZ77 matches, as a
// BlueField-2 writes) still decodes: the literal decoder hands it on.
func TestShuffleDeflateDecodesStreamsWithMatches(t *testing.T) {
	n := 20000
	src := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		testweights.Put(src, i, float32(i%7)/4, tensor.BFloat16) // repetitive: matches
	}
	in := codec.Info{Meta: tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(n)}}}
	pl := newPlanes(2, n)
	shuffle.Split(pl, src, 2, true)
	shuffled := append(bytes.Clone(pl[0]), pl[1]...)
	stream := stdDeflate(t, shuffled, stdflate.BestSpeed)
	var lt literalTables
	if inflateLiterals(make([]byte, len(shuffled)), stream, &lt) {
		t.Fatal("a stream with matches was taken by the literal decoder")
	}
	back := make([]byte, len(src))
	if err := (shuffleDeflate{}).Decode(back, stream, in, adler32.Checksum(shuffled)); err != nil || !bytes.Equal(back, src) {
		t.Fatalf("decode: %v", err)
	}
	stream[len(stream)/2] ^= 0x55
	if err := (shuffleDeflate{}).Decode(back, stream, in, adler32.Checksum(shuffled)); err == nil {
		t.Fatal("a corrupted stream decoded without an error")
	}
}

// The fast paths take an entry's count as its low word shifted by 8 and
// its bits from n's low byte: build leaves bits 16-31 of every entry zero,
// the count at most 4 and the bits at most litTableBits.
func TestLiteralTablesEntryLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	var lt literalTables
	for it := 0; it < 50; it++ {
		var freq [288]uint32
		for s := 0; s <= endOfBlock; s++ {
			if r.IntN(3) > 0 {
				freq[s] = uint32(r.ExpFloat64() * float64(1+r.IntN(1000)))
			}
		}
		freq[endOfBlock] = 1
		var lens [288]uint8
		var tr huffmanTree
		buildLengths(freq[:endOfBlock+1], lens[:endOfBlock+1], litCodeLimit, &tr)
		code := lens[:endOfBlock+1]
		if it == 0 {
			code = fixedLengths()
		}
		if !lt.build(code) {
			t.Fatalf("it %d: the code does not build", it)
		}
		for i, e := range lt.multi {
			if e>>16&0xFFFF != 0 || e>>8&0xFF > 4 || e&0xFF > litTableBits {
				t.Fatalf("it %d: entry %d is %016x", it, i, e)
			}
		}
	}
}
