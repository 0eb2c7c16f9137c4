package codec_test

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	_ "github.com/gotensor/gotensor/gotensor/codec/all"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// SampleRatio codes n bytes from the middle of a tensor, from a multiple
// of 16, and none never shrinks it.
func TestSampleRatio(t *testing.T) {
	raw := make([]byte, 1<<20+40)
	for i := range raw {
		raw[i] = byte(i / 7 % 5)
	}
	meta := tensor.Meta{DType: tensor.Int32, Shape: []int64{int64(len(raw) / 4)}}
	none, _ := codec.ByName("none")
	lz4, _ := codec.ByName("lz4")
	if r := codec.SampleRatio(none, meta, raw, 64<<10); r != 1 {
		t.Errorf("none: %v, want 1", r)
	}
	at := (len(raw)/2 - 32<<10) &^ 15
	enc, _, err := lz4.Encode(nil, raw[at:at+64<<10], codec.Info{Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	want := float64(64<<10) / float64(len(enc))
	if r := codec.SampleRatio(lz4, meta, raw, 64<<10); r != want || r <= 1 {
		t.Errorf("lz4: %v, want %v", r, want)
	}
}
