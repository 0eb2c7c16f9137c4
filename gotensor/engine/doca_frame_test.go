//go:build doca && fakedoca

package engine_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Frames of float32 weights in chunks of the device's maximum buffer decode
// with every chunk on the device, several at once, byte for byte.
func TestDOCAFramesInHardware(t *testing.T) {
	const maxBuf = 64 << 10
	engine.FakeReset()
	engine.FakeClearDevices()
	engine.FakeAddDevice(engine.FakePCI, engine.FakeCapAll, maxBuf, false)
	engine.FakeSetDelay(500)
	d, err := engine.OpenDOCA(engine.FakePCI, engine.DOCAOptions{Tasks: 8})
	if err != nil {
		t.Fatal(err)
	}
	engine.Use(d)
	defer func() {
		engine.Use(engine.Software{})
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	if engine.MaxChunk() != maxBuf {
		t.Fatalf("engine.MaxChunk %d", engine.MaxChunk())
	}
	r := rand.New(rand.NewPCG(7, 7))
	raw := make([]byte, 1<<20)
	for i := 0; i < len(raw); i += 4 {
		binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(float32(math.Round(r.NormFloat64()*64)/1024))) // compressible
	}
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{int64(len(raw) / 4)}}
	chunks := int64(len(raw) / maxBuf)
	// a shuffle-deflate chunk is two DEFLATE streams (one in frames of streams=1), a task each
	for _, spec := range []string{"deflate", "shuffle-deflate", "shuffle-deflate:streams=1", "lz4"} {
		streams := streamsPerChunk(spec)
		before := d.Stats()
		f, err := frame.Encode(meta, raw, spec, frame.Options{ChunkSize: engine.MaxChunk()})
		if err != nil {
			t.Fatal(spec, err)
		}
		dst := make([]byte, len(raw))
		if _, err := frame.Decode(context.Background(), f, dst, frame.DefaultLimits); err != nil || !bytes.Equal(dst, raw) {
			t.Fatalf("%s: %v", spec, err)
		}
		after := d.Stats()
		// lz4 may store an incompressible chunk raw, which never reaches the engine
		if got := after.Tasks - before.Tasks; got != streams*chunks && spec != "lz4" || got == 0 || after.Fallbacks != before.Fallbacks {
			t.Fatalf("%s: %d of %d chunks on the device, stats %+v", spec, got, chunks, after)
		}
	}
	if fs := engine.FakeGetStats(); fs.MaxInFlight < 2 {
		t.Logf("at most %d task in flight (the frame decoded on one worker)", fs.MaxInFlight)
	}
}

// Where the device compresses DEFLATE (a BlueField-2), deflate and
// shuffle-deflate frames are encoded on it, and software decodes them.
func TestDOCACompressesDeflateFrames(t *testing.T) {
	const maxBuf = 64 << 10
	engine.FakeReset()
	engine.FakeClearDevices()
	engine.FakeAddDevice(engine.FakePCI, engine.FakeCapInflate|engine.FakeCapDeflate, maxBuf, false)
	d, err := engine.OpenDOCA(engine.FakePCI, engine.DOCAOptions{Tasks: 4, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		engine.Use(engine.Software{})
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	r := rand.New(rand.NewPCG(9, 9))
	raw := make([]byte, 512<<10)
	for i := 0; i < len(raw); i += 4 {
		binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(float32(math.Round(r.NormFloat64()*64)/1024)))
	}
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{int64(len(raw) / 4)}}
	chunks := int64(len(raw) / (maxBuf / 2))
	for _, spec := range []string{"deflate", "shuffle-deflate", "shuffle-deflate:streams=1"} {
		engine.Use(d)
		before := d.Stats()
		f, err := frame.Encode(meta, raw, spec, frame.Options{ChunkSize: maxBuf / 2})
		if err != nil {
			t.Fatal(spec, err)
		}
		if got := d.Stats().Tasks - before.Tasks; got != streamsPerChunk(spec)*chunks {
			t.Fatalf("%s: %d of %d chunks compressed on the device", spec, got, chunks)
		}
		engine.Use(engine.Software{}) // the device's streams are plain raw DEFLATE
		dst := make([]byte, len(raw))
		if _, err := frame.Decode(context.Background(), f, dst, frame.DefaultLimits); err != nil || !bytes.Equal(dst, raw) {
			t.Fatalf("%s: software decode of the device's frame: %v", spec, err)
		}
	}
}

// streamsPerChunk is how many DEFLATE streams, device tasks, a chunk of
// the codec spec holds.
func streamsPerChunk(spec string) int64 {
	if spec == "shuffle-deflate" {
		return 2
	}
	return 1
}
