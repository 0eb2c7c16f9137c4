//go:build doca && fakedoca

package engine

import (
	"bytes"
	"compress/flate"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// sample is compressible bytes, like the exponent planes of weights.
func sample(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.NormFloat64()*8) + 'a'
	}
	return b
}

func deflated(t testing.TB, raw []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, 1)
	w.Write(raw)
	w.Close()
	return buf.Bytes()
}

// open resets the fake, lets configure change it and opens the engine,
// which the test closes, checking that every DOCA object was released.
func open(t *testing.T, opt DOCAOptions, configure func()) *DOCA {
	t.Helper()
	FakeReset()
	if configure != nil {
		configure()
	}
	live := FakeGetStats().Live
	d, err := OpenDOCA(FakePCI, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		if got := FakeGetStats().Live; got != live {
			t.Errorf("%d DOCA objects left after Close", got-live)
		}
	})
	return d
}

func inflateOK(t *testing.T, d *DOCA, raw []byte) {
	t.Helper()
	dst := make([]byte, len(raw))
	sum, err := d.Inflate(dst, deflated(t, raw))
	if err != nil || !bytes.Equal(dst, raw) || sum != adler32.Checksum(raw) {
		t.Fatalf("inflate: %v", err)
	}
}

func TestDOCAOffloads(t *testing.T) {
	d := open(t, DOCAOptions{Compress: true}, nil)
	raw := sample(300<<10, 1)
	inflateOK(t, d, raw)

	enc := make([]byte, lz4.CompressBlockBound(len(raw)))
	n, _ := lz4.CompressBlock(raw, enc, nil)
	dst := make([]byte, len(raw))
	if err := d.LZ4Block(dst, enc[:n]); err != nil || !bytes.Equal(dst, raw) {
		t.Fatalf("lz4: %v", err)
	}

	// the device's DEFLATE is a raw stream that software inflates
	out, sum, ok := d.Deflate(nil, raw)
	if !ok || sum != adler32.Checksum(raw) {
		t.Fatalf("deflate on the device: ok %v", ok)
	}
	back, err := io.ReadAll(flate.NewReader(bytes.NewReader(out)))
	if err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("software inflate of the device's stream: %v", err)
	}
	if st := d.Stats(); st.Tasks != 3 || st.Fallbacks != 0 {
		t.Fatalf("stats %+v", st)
	}
	// buffers registered once, sources read-only
	for i := 0; i < 5; i++ {
		inflateOK(t, d, sample(100<<10, uint64(100+i)))
	}
	if fs := FakeGetStats(); fs.Tasks != 8 || fs.BadAccess != 0 || fs.SrcWritable != 0 || fs.MMaps != 2 {
		t.Fatalf("fake %+v", fs)
	}
}

func TestDOCAWrongStreamsStillCorrupt(t *testing.T) {
	d := open(t, DOCAOptions{}, nil)
	raw := sample(10000, 2)
	enc := deflated(t, raw)
	if _, err := d.Inflate(make([]byte, len(raw)-1), enc); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("too long a stream: %v", err)
	}
	if _, err := d.Inflate(make([]byte, len(raw)+1), enc); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("too short a stream: %v", err)
	}
	if _, err := d.Inflate(make([]byte, len(raw)), enc[:len(enc)/2]); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("truncated stream: %v", err)
	}
}

// A failed task is redone in software; the next runs on the device again.
func TestDOCAFailedTaskFallsBack(t *testing.T) {
	d := open(t, DOCAOptions{}, nil)
	FakeFailTasks(1)
	inflateOK(t, d, sample(50000, 3))
	inflateOK(t, d, sample(50000, 4))
	if st := d.Stats(); st.Failed != 1 || st.Fallbacks != 1 || st.Tasks != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// After the context stops, the engine restarts it instead of falling back
// for good.
func TestDOCARecoversAfterContextStop(t *testing.T) {
	d := open(t, DOCAOptions{}, nil)
	inflateOK(t, d, sample(40000, 5))
	FakeStopContext()
	inflateOK(t, d, sample(40000, 6)) // flushed by the stop: software
	for i := 0; i < 3; i++ {
		inflateOK(t, d, sample(40000, uint64(7+i)))
	}
	st, fs := d.Stats(), FakeGetStats()
	if st.Restarts != 1 || st.Tasks != 4 || st.Fallbacks != 1 || fs.CtxStarts != 2 || fs.Flushed != 1 {
		t.Fatalf("stats %+v fake %+v", st, fs)
	}
	if d.Health() != "" {
		t.Fatal(d.Health())
	}
}

// A lost completion times out into software without holding up the other
// callers; the restart returns its slot.
func TestDOCALostCompletionTimesOut(t *testing.T) {
	const tasks = 4
	d := open(t, DOCAOptions{Tasks: tasks, Timeout: 300 * time.Millisecond}, nil)
	FakeLoseTasks(1)
	start := time.Now()
	inflateOK(t, d, sample(20000, 11))
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("a lost completion took %v", el)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3*tasks; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inflateOK(t, d, sample(20000, uint64(12+i)))
		}()
	}
	wg.Wait()
	st := d.Stats()
	// (a loaded machine may time out more than the lost task)
	if st.Timeouts < 1 || st.Restarts < 1 || st.Tasks < 2*tasks {
		t.Fatalf("stats %+v", st)
	}
	if len(d.free) != tasks {
		t.Fatalf("%d of %d slots free after the restart", len(d.free), tasks)
	}
}

// Every completion lost: calls stay bounded by the timeout.
func TestDOCANoHangWhenTheDeviceStalls(t *testing.T) {
	d := open(t, DOCAOptions{Tasks: 2, Timeout: 30 * time.Millisecond}, nil)
	FakeLoseTasks(1 << 20)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inflateOK(t, d, sample(5000, uint64(30+i)))
		}()
	}
	wg.Wait()
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("8 calls on a stalled device took %v", el)
	}
	if st := d.Stats(); st.Timeouts == 0 || st.Tasks != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Chunks over the device's maximum buffer go to software; the engine
// reports the limit for writers to size chunks by.
func TestDOCAMaxBufferSize(t *testing.T) {
	const max = 64 << 10
	d := open(t, DOCAOptions{Compress: true}, func() {
		FakeClearDevices()
		FakeAddDevice(FakePCI, FakeCapAll, max, false)
	})
	if d.MaxChunk() != max {
		t.Fatalf("MaxChunk %d, want the device's %d", d.MaxChunk(), max)
	}
	inflateOK(t, d, sample(max, 40))
	inflateOK(t, d, sample(max+16, 41))
	if _, _, ok := d.Deflate(nil, sample(2*max, 42)); ok {
		t.Fatal("compressed more than the device's maximum buffer")
	}
	if st := d.Stats(); st.Tasks != 1 || st.TooLarge != 2 {
		t.Fatalf("stats %+v", st)
	}
	if fs := FakeGetStats(); fs.Tasks != 1 || fs.Oversize != 0 {
		t.Fatalf("a task over the maximum buffer reached the device: %+v", fs)
	}
}

// Concurrent callers keep several tasks in flight.
func TestDOCAPipelines(t *testing.T) {
	d := open(t, DOCAOptions{Tasks: 8}, func() { FakeSetDelay(2000) })
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inflateOK(t, d, sample(16<<10, uint64(50+i)))
		}()
	}
	wg.Wait()
	if fs := FakeGetStats(); fs.MaxInFlight < 2 || fs.MaxInFlight > 8 {
		t.Fatalf("at most %d tasks in flight, want 2..8", fs.MaxInFlight)
	}
	if st := d.Stats(); st.Tasks != 32 {
		t.Fatalf("stats %+v", st)
	}
}

// The first device at the address fails to open: the next one is used.
func TestDOCATriesEveryMatch(t *testing.T) {
	d := open(t, DOCAOptions{}, func() {
		FakeClearDevices()
		FakeAddDevice("0000:3a:00.0", FakeCapAll, 1<<20, false)
		FakeAddDevice(FakePCI, FakeCapAll, 1<<20, true)
		FakeAddDevice(FakePCI, FakeCapAll, 1<<20, false)
	})
	inflateOK(t, d, sample(1000, 60))
	if d.Stats().Tasks != 1 {
		t.Fatal("not on the device")
	}
}

// A failed LZ4 setup leaves DEFLATE on the device; LZ4 runs in software.
func TestDOCALZ4SetupFailureKeepsDeflate(t *testing.T) {
	d := open(t, DOCAOptions{}, func() { FakeFailLZ4Conf(true) })
	raw := sample(30000, 61)
	enc := make([]byte, lz4.CompressBlockBound(len(raw)))
	n, _ := lz4.CompressBlock(raw, enc, nil)
	dst := make([]byte, len(raw))
	if err := d.LZ4Block(dst, enc[:n]); err != nil || !bytes.Equal(dst, raw) {
		t.Fatal(err)
	}
	inflateOK(t, d, raw)
	if st := d.Stats(); st.Tasks != 1 || st.Fallbacks != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDOCAOpenErrors(t *testing.T) {
	FakeReset()
	live := FakeGetStats().Live
	if _, err := OpenDOCA("0000:99:00.0", DOCAOptions{}); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("no such device: %v", err)
	}
	FakeClearDevices()
	FakeAddDevice(FakePCI, FakeCapDeflate, 1<<20, false)
	if _, err := OpenDOCA(FakePCI, DOCAOptions{}); !errs.Is(err, errs.Unsupported) {
		t.Fatalf("no DEFLATE decompression: %v", err)
	}
	FakeClearDevices()
	FakeAddDevice(FakePCI, FakeCapAll, 1<<20, true)
	if _, err := OpenDOCA(FakePCI, DOCAOptions{}); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("open fails: %v", err)
	}
	if got := FakeGetStats().Live; got != live {
		t.Fatalf("%d DOCA objects leaked by failed opens", got-live)
	}
}

// Close with tasks in flight flushes them; later calls run in software.
func TestDOCACloseWhileBusy(t *testing.T) {
	FakeReset()
	FakeSetDelay(50000)
	live := FakeGetStats().Live
	d, err := OpenDOCA(FakePCI, DOCAOptions{Tasks: 4})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inflateOK(t, d, sample(8000, uint64(70+i)))
		}()
	}
	time.Sleep(10 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	inflateOK(t, d, sample(8000, 80))
	if got := FakeGetStats().Live; got != live {
		t.Fatalf("%d DOCA objects left after Close", got-live)
	}
}

// Opening at init fails visibly: DOCAStatus keeps the typed error.
func TestDOCAStatusKeepsOpenError(t *testing.T) {
	FakeReset()
	_, err := OpenDOCA("0000:99:00.0", DOCAOptions{})
	setDOCAStatus("", err)
	defer setDOCAStatus("off (GOTENSOR_DOCA_PCI is not set)", nil)
	msg, got := DOCAStatus()
	if !errs.Is(got, errs.Unavailable) || msg != err.Error() {
		t.Fatalf("status %q, %v", msg, got)
	}
}

// With GOTENSOR_DOCA_PCI set (make doca-fake-test), init opened the device.
func TestDOCAInitFromEnv(t *testing.T) {
	if os.Getenv("GOTENSOR_DOCA_PCI") == "" {
		t.Skip("GOTENSOR_DOCA_PCI is not set")
	}
	msg, err := DOCAStatus()
	if _, ok := Current().(*DOCA); !ok || err != nil {
		t.Fatalf("engine %s, status %q: %v", Current().Name(), msg, err)
	}
	t.Log(msg)
}

// A device taking 200 µs per 8 KiB task (the fake's own zlib work kept
// small), 8 callers: one slot (one task at a time, as before) against eight.
func BenchmarkDOCAPipeline(b *testing.B) {
	raw := sample(8<<10, 90)
	enc := deflated(b, raw)
	for _, tasks := range []int{1, 8} {
		b.Run("tasks="+strconv.Itoa(tasks), func(b *testing.B) {
			FakeReset()
			FakeSetDelay(200)
			d, err := OpenDOCA(FakePCI, DOCAOptions{Tasks: tasks})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			b.SetBytes(int64(len(raw)))
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // about 8 callers
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]byte, len(raw))
				for pb.Next() {
					if _, err := d.Inflate(dst, enc); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if st := d.Stats(); st.Fallbacks != 0 {
				b.Fatalf("stats %+v", st)
			}
		})
	}
}
