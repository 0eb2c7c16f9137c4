package engine_test

import (
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	_ "github.com/gotensor/gotensor/gotensor/codec/all"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// counting is the software engine, counting the streams it decodes.
type counting struct {
	engine.Software
	inflates, lz4s atomic.Int64
}

func (c *counting) Name() string { return "counting" }
func (c *counting) Inflate(dst, src []byte) (uint32, error) {
	c.inflates.Add(1)
	return c.Software.Inflate(dst, src)
}
func (c *counting) LZ4Block(dst, src []byte) error {
	c.lz4s.Add(1)
	return c.Software.LZ4Block(dst, src)
}

// Use decides which engine the codecs' DEFLATE and LZ4 decodes run on, and
// Use(Software{}) takes it back.
func TestUseRoutesCodecDecodes(t *testing.T) {
	raw := make([]byte, 64<<10)
	for i := range raw {
		raw[i] = byte(i % 7)
	}
	in := codec.Info{Meta: tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(len(raw))}}}
	c := &counting{}
	engine.Use(c)
	defer engine.Use(engine.Software{})
	if engine.Current().Name() != "counting" {
		t.Fatalf("current engine %q", engine.Current().Name())
	}
	for _, name := range []string{"deflate", "lz4"} {
		cd, _ := codec.ByName(name)
		enc, aux, err := cd.Encode(nil, raw, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := cd.Decode(make([]byte, len(raw)), enc, in, aux); err != nil {
			t.Fatal(name, err)
		}
	}
	if c.inflates.Load() != 1 || c.lz4s.Load() != 1 {
		t.Fatalf("engine saw %d inflates and %d LZ4 blocks, want 1 and 1", c.inflates.Load(), c.lz4s.Load())
	}
	engine.Use(engine.Software{})
	cd, _ := codec.ByName("deflate")
	enc, aux, _ := cd.Encode(nil, raw, in)
	cd.Decode(make([]byte, len(raw)), enc, in, aux)
	if c.inflates.Load() != 1 || engine.Current().Name() != "software" {
		t.Fatal("Use(Software{}) did not take the engine back")
	}
}
