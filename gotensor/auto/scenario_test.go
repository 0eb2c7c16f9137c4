package auto

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// TestScenarios runs the scenarios in testdata: a Chooser over a
// simulated store (a world: its link, this machine's codec speeds, what
// each codec's transfers truly take) on a fake clock, no Store. Rewrite
// the expected output with go test ./gotensor/auto -run Scenarios -rewrite.
//
// Commands (sizes take KiB/MiB/GiB, rates gbit/mbit or bytes per second,
// times Go durations):
//
//	link rate= [read=] [latency=] [cpu=] [url=] [probe] [extra=] [options]
//	    a new world and Chooser: the store's true link each way, the share of
//	    the CPU moving takes, extra time before any write's bytes move;
//	    probe: the Chooser may probe it. The Chooser starts from the seed
//	    of url's scheme (default tcp://node:1). Options: gain=, keep=, ttl= ...
//	speeds        one line per codec: name encode= decode= (as measured),
//	              or name unknown (not measured yet)
//	slow codec= [write=] [read=]   its transfers truly take that many times
//	    what the model says (coding and moving on the same cores)
//	estimate rate= [read=] [latency=] [cpu=]   set the Chooser's link estimate
//	write dtype size [spec=auto] [data=weights|ints|noise] [streamed] [n=1] [read] [took=]
//	    write (and read back) a tensor n times; prints each write's codec
//	    and how it was chosen; took: what each write took instead of the truth
//	batch n= dtype size [read] [streamed]   n writes in flight together
//	costs dtype size [streamed] [batch] [last=]   the weigh, not a write
//	transfer way=out|in bytes= took= [n=1] [coded] [together]   bare transfers
//	wait d        the clock moves on
//	show          the link estimate
//	stats         the auto stats
//	factor codec= way=write|read dtype size   a factor as weighed
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var w *world
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "link" && w == nil {
				t.Fatalf("%s: the first command must be link", d.Pos)
			}
			switch d.Cmd {
			case "link":
				w = newWorld(t, d)
				return ""
			case "speeds":
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					if f := strings.Fields(line); len(f) == 2 && f[1] == "unknown" {
						delete(w.speeds, f[0])
					} else {
						w.speeds[f[0]] = Speed{rate(t, kv(f[1:], "encode", "")), rate(t, kv(f[1:], "decode", ""))}
					}
				}
				return ""
			case "slow":
				c := arg(d, "codec", "")
				w.slow[c] = [2]float64{num(t, arg(d, "write", "1")), num(t, arg(d, "read", "1"))}
				return ""
			case "estimate":
				l := w.c.Link()
				r := rate(t, arg(d, "rate", fmt.Sprint(l.BytesPerSecond)))
				lat := dur(t, arg(d, "latency", fmt.Sprint(time.Duration(l.LatencySeconds*1e9))))
				n := int64(8 << 20)
				w.c.mu.Lock()
				w.c.link.reseed(lat, time.Duration(float64(n)/r*1e9), n, num(t, arg(d, "cpu", "-1")))
				if d.HasArg("read") {
					w.c.link.l.ReadBytesPerSecond = rate(t, arg(d, "read", ""))
				}
				w.c.mu.Unlock()
				return ""
			case "write":
				return w.write(t, d)
			case "batch":
				return w.batch(t, d)
			case "costs":
				return w.costs(t, d)
			case "transfer":
				return w.transfer(t, d)
			case "wait":
				w.clock.advance(dur(t, d.CmdArgs[0].Key))
				return ""
			case "show":
				return w.show()
			case "stats":
				return fmt.Sprintf("%+v\n", w.c.Stats())
			case "factor":
				meta, raw := tensorOf(t, d)
				cd, _ := codec.ByName(arg(d, "codec", ""))
				way := map[string]Way{"write": ToStore, "read": FromStore}[arg(d, "way", "write")]
				w.c.mu.Lock()
				defer w.c.mu.Unlock()
				v, own := w.c.factor(kindOf(meta.DType, len(raw)), cd.ID(), way, !d.HasArg("batch"), w.clock.now())
				return fmt.Sprintf("%.4g own=%v", v, own)
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

// world is a simulated store behind a Chooser: its link, codec speeds
// and slowdowns are the truth its transfers take on the fake clock.
type world struct {
	c            *Chooser
	clock        *fakeClock
	rate, read   float64 // bytes per second each way
	latency      time.Duration
	extra        time.Duration // before any write's bytes move
	cpu          float64
	speeds       map[string]Speed
	slow         map[string][2]float64
	lastMeta     tensor.Meta
	lastRaw      []byte
	lastCodec    codec.Codec
	lastStored   int64
	lastStreamed bool
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newWorld(t *testing.T, d *datadriven.TestData) *world {
	w := &world{
		clock: &fakeClock{t: time.Unix(1e6, 0)},
		rate:  rate(t, arg(d, "rate", "1gbit")), latency: dur(t, arg(d, "latency", "100us")),
		extra: dur(t, arg(d, "extra", "0s")), cpu: num(t, arg(d, "cpu", "0")),
		speeds: map[string]Speed{"none": {10e9, 10e9}, "planes": {1.5e9, 2e9}, "lz4": {1e9, 4e9}},
		slow:   map[string][2]float64{},
	}
	w.read = rate(t, arg(d, "read", fmt.Sprint(w.rate)))
	o := Defaults()
	o.Now = w.clock.now
	o.CPU = func() (CPUTimes, bool) {
		ns := uint64(w.clock.now().UnixNano())
		return CPUTimes{Busy: uint64(w.cpu * float64(ns)), Total: ns}, true
	}
	o.Speed = func(_ tensor.DType, c codec.Codec, _ []byte) (Speed, bool) {
		sp, ok := w.speeds[c.Name()]
		return sp, ok
	}
	for key, f := range map[string]*float64{"gain": &o.Gain, "codinggain": &o.CodingGain, "observedgain": &o.ObservedGain, "keep": &o.Keep} {
		*f = num(t, arg(d, key, fmt.Sprint(*f)))
	}
	o.ChoiceTTL = dur(t, arg(d, "ttl", o.ChoiceTTL.String()))
	var p Prober
	if d.HasArg("probe") {
		p = w
	}
	w.c = New(arg(d, "url", "tcp://node:1"), p, o)
	return w
}

// Has and PutStream are the world's link as the probe sees it.
func (w *world) Has(context.Context, string) (bool, error) {
	w.clock.advance(w.latency)
	return false, nil
}

func (w *world) PutStream(context.Context, string) (store.PartSink, error) { return probeSink{w}, nil }

type probeSink struct{ w *world }

func (probeSink) BorrowsParts() bool        { return false }
func (probeSink) Announce(int, int64) error { return nil }

func (s probeSink) WritePart(_ int64, b []byte) error {
	s.w.clock.advance(time.Duration(float64(len(b)) / s.w.rate * 1e9))
	return nil
}
func (s probeSink) Commit([]byte) error { return nil }
func (s probeSink) Abort()              { s.w.clock.advance(s.w.latency) }

// truth is what moving and coding a tensor of raw bytes into stored bytes
// with c takes in the world each way, and of it what encoding and
// decoding take.
func (w *world) truth(c codec.Codec, raw, stored int, streamed, batch bool) (write, read, enc, dec float64) {
	m := model{Link: Link{BytesPerSecond: w.rate, LatencySeconds: w.latency.Seconds(), ReadBytesPerSecond: w.read,
		ReadLatencySeconds: w.latency.Seconds(), CPUShare: w.cpu}, streamed: streamed, batch: batch}
	sp := w.speeds[c.Name()]
	if sp.Encode == 0 {
		sp = Speed{1e12, 1e12}
	}
	write, read = m.times(float64(raw), float64(stored), sp)
	slow := [2]float64{1, 1}
	if s, ok := w.slow[c.Name()]; ok {
		slow = s
	}
	return write * slow[0], read * slow[1], float64(raw) / sp.Encode, float64(raw) / sp.Decode
}

func (w *world) write(t *testing.T, d *datadriven.TestData) string {
	meta, raw := tensorOf(t, d)
	n, _ := strconv.Atoi(arg(d, "n", "1"))
	streamed := d.HasArg("streamed")
	var out strings.Builder
	if d.HasArg("staged") {
		cw, err := w.c.Choose(context.Background(), arg(d, "spec", Spec), meta, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		cw.Done(0, nil)
		return cw.Codec.Name() + "\n"
	}
	for range n {
		before := w.c.Stats()
		cw, err := w.c.Choose(context.Background(), arg(d, "spec", Spec), meta, raw, streamed)
		if err != nil {
			t.Fatal(err)
		}
		stored := w.stored(cw.Codec, meta, raw)
		write, _, enc, _ := w.truth(cw.Codec, len(raw), stored, streamed, false)
		if d.HasArg("took") {
			write = dur(t, arg(d, "took", "")).Seconds()
		}
		coded := cw.Codec.ID() != codec.IDNone
		w.clock.advance(w.extra)
		if !streamed { // the frame is coded, then moves
			enc = min(enc, write)
			w.clock.advance(time.Duration(enc * 1e9))
			write -= enc
		}
		w.c.Begin(w.c.o.Now())
		w.clock.advance(time.Duration(write * 1e9))
		w.c.End(w.c.o.Now(), ToStore, int64(stored), coded && streamed)
		cw.Done(int64(stored), nil)
		fmt.Fprintf(&out, "%s %s\n", cw.Codec.Name(), how(before, w.c.Stats()))
		w.lastMeta, w.lastRaw, w.lastCodec, w.lastStored, w.lastStreamed = meta, raw, cw.Codec, int64(stored), streamed
		if d.HasArg("read") {
			w.readBack()
		}
	}
	return out.String()
}

// readBack reads the last tensor written: the frame moves, then decodes
// (streamed: while later pieces move).
func (w *world) readBack() {
	r := w.c.Read()
	start := w.clock.now()
	_, read, _, dec := w.truth(w.lastCodec, len(w.lastRaw), int(w.lastStored), w.lastStreamed, false)
	coded := w.lastCodec.ID() != codec.IDNone
	move := read
	if !w.lastStreamed {
		move = max(read-dec, 0)
	}
	w.c.Begin(w.c.o.Now())
	w.clock.advance(time.Duration(move * 1e9))
	w.c.End(w.c.o.Now(), FromStore, w.lastStored, coded && w.lastStreamed)
	w.clock.advance(time.Duration((read - move) * 1e9))
	r.Done(w.lastMeta.DType, w.lastCodec.ID(), int64(len(w.lastRaw)), w.lastStored, w.lastStreamed, w.clock.now().Sub(start))
}

// batch writes n tensors of a kind in flight together: the writes are
// chosen while the others are in flight, their frames move in one busy
// period, and none of them ran alone.
func (w *world) batch(t *testing.T, d *datadriven.TestData) string {
	meta, raw := tensorOf(t, d)
	n, _ := strconv.Atoi(arg(d, "n", "2"))
	streamed := d.HasArg("streamed")
	before := w.c.Stats()
	others := w.c.Read() // the batch's calls begin together
	writes := make([]Write, n)
	got := map[string]int{}
	var move float64
	for i := range writes {
		cw, err := w.c.Choose(context.Background(), arg(d, "spec", Spec), meta, raw, streamed)
		if err != nil {
			t.Fatal(err)
		}
		writes[i] = cw
		got[cw.Codec.Name()]++
		write, _, _, _ := w.truth(cw.Codec, len(raw), w.stored(cw.Codec, meta, raw), streamed, true)
		move += write
	}
	for range writes {
		w.c.Begin(w.c.o.Now())
	}
	w.clock.advance(time.Duration(move * 1e9))
	for _, cw := range writes {
		stored := w.stored(cw.Codec, meta, raw)
		w.c.End(w.c.o.Now(), ToStore, int64(stored), cw.Codec.ID() != codec.IDNone)
		cw.Done(int64(stored), nil)
	}
	others.Done(0, 0, 0, 0, false, 0)
	return fmt.Sprintf("%v %s\n", got, how(before, w.c.Stats()))
}

// stored is the frame's size for raw coded with c, by its sample's ratio.
func (w *world) stored(c codec.Codec, meta tensor.Meta, raw []byte) int {
	return int(float64(len(raw)) / codec.SampleRatio(c, meta, raw, w.c.o.SampleBytes))
}

// how says how a write's codec was chosen, from the stats around it.
func how(a, b Stats) string {
	switch {
	case b.Weighed > a.Weighed && b.New > a.New:
		return "weighed new"
	case b.Weighed > a.Weighed && b.Expired > a.Expired:
		return "weighed expired"
	case b.Weighed > a.Weighed && b.Factor > a.Factor:
		return "weighed factor"
	case b.Reused > a.Reused:
		return "reused"
	}
	return "unweighed"
}

func (w *world) costs(t *testing.T, d *datadriven.TestData) string {
	meta, raw := tensorOf(t, d)
	var others Read
	if d.HasArg("batch") {
		others = w.c.Read()
		defer others.Done(0, 0, 0, 0, false, 0)
		w.c.mu.Lock()
		w.c.active++
		w.c.mu.Unlock()
		defer func() { w.c.mu.Lock(); w.c.active--; w.c.mu.Unlock() }()
	}
	if w.c.prober != nil { // as a write would, before it weighs
		w.c.probed.Do(func() { w.c.probe(context.Background()) })
	}
	m := w.c.model(d.HasArg("streamed"))
	costs, _ := w.c.costs(meta, raw, m)
	var last codec.Codec
	if d.HasArg("last") {
		last, _ = codec.ByName(arg(d, "last", ""))
	}
	var out strings.Builder
	var best *cost
	for i := range costs {
		x := &costs[i]
		fmt.Fprintf(&out, "%-6s ratio %.3f write %.4gs read %.4gs coding %.4gs factors %.3g/%.3g", x.c.Name(), x.ratio, x.write, x.read, x.coding, x.wf, x.rf)
		if best != nil {
			fmt.Fprintf(&out, ": saves %.1f%% of %s's time, needs %.1f%%", 100*(1-x.time()/best.time()), best.c.Name(), 100*w.c.margin(x, best, last))
		}
		out.WriteString("\n")
		if best == nil || x.time() < (1-w.c.margin(x, best, last))*best.time() {
			best = x
		}
	}
	fmt.Fprintf(&out, "-> %s\n", best.c.Name())
	return out.String()
}

// transfer moves bytes n times, one after the other, or together: n
// transfers in flight at once, one busy period of took.
func (w *world) transfer(t *testing.T, d *datadriven.TestData) string {
	n, _ := strconv.Atoi(arg(d, "n", "1"))
	way := map[string]Way{"out": ToStore, "in": FromStore}[arg(d, "way", "out")]
	bytes, took := int64(size(t, arg(d, "bytes", "0"))), dur(t, arg(d, "took", "0s"))
	if d.HasArg("rate") {
		took = dur(t, arg(d, "latency", "0s")) + time.Duration(float64(bytes)/rate(t, arg(d, "rate", ""))*1e9)
	}
	if d.HasArg("together") {
		for range n {
			w.c.Begin(w.c.o.Now())
		}
		w.clock.advance(took)
		for range n {
			w.c.End(w.c.o.Now(), way, bytes, d.HasArg("coded"))
		}
		return w.show()
	}
	for range n {
		w.c.Begin(w.c.o.Now())
		w.clock.advance(took)
		w.c.End(w.c.o.Now(), way, bytes, d.HasArg("coded"))
	}
	return w.show()
}

func (w *world) show() string {
	l := w.c.Link()
	return fmt.Sprintf("link out %.4g B/s + %.4gs, in %.4g B/s + %.4gs, cpu %.2f, %d samples from %s\n",
		l.BytesPerSecond, l.LatencySeconds, l.ReadBytesPerSecond, l.ReadLatencySeconds, l.CPUShare, l.Samples, l.Seed)
}

// tensorOf is the tensor a command names: its dtype and size as the first
// two bare arguments, and data= (weights: normal bfloat16-like values in
// the dtype; ints: small integers; noise: random bytes).
func tensorOf(t *testing.T, d *datadriven.TestData) (tensor.Meta, []byte) {
	var bare []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			bare = append(bare, a.Key)
		}
	}
	if len(bare) < 2 {
		t.Fatalf("%s: want a dtype and a size", d.Pos)
	}
	dt, err := tensor.ParseDType(map[string]string{"bf16": "bfloat16", "f16": "float16", "f32": "float32", "i32": "int32"}[bare[0]])
	if err != nil {
		t.Fatal(err)
	}
	n := size(t, bare[1])
	data := arg(d, "data", map[bool]string{true: "weights", false: "ints"}[dt.IsFloat()])
	return tensor.Meta{DType: dt, Shape: []int64{int64(n / dt.Size())}}, makeData(t, dt, n, data)
}

var dataCache sync.Map

func makeData(t *testing.T, dt tensor.DType, n int, kind string) []byte {
	key := fmt.Sprint(dt, n, kind)
	if b, ok := dataCache.Load(key); ok {
		return b.([]byte)
	}
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	switch kind {
	case "weights":
		w := testweights.NormalBF16(n/2, 5, 6)
		if dt.Size() == 2 {
			b = w
		} else { // the bfloat16 values widened: what a bf16 model cast to float32 holds
			for i := 0; i+4 <= n; i += 4 {
				copy(b[i+2:i+4], w[i/2:i/2+2])
			}
		}
	case "ints":
		for i := 0; i+4 <= n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], uint32(r.IntN(16)))
		}
	case "noise":
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	default:
		t.Fatalf("unknown data %q", kind)
	}
	dataCache.Store(key, b)
	return b
}

func arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

func kv(fields []string, key, def string) string {
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			return v
		}
	}
	return def
}

func num(t *testing.T, s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func size(t *testing.T, s string) int {
	for i, suffix := range []string{"GiB", "MiB", "KiB", "B"} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			return int(num(t, v) * float64(int(1)<<(10*(3-i))))
		}
	}
	return int(num(t, s))
}

// rate is bytes per second: "1gbit", "100mbit", or a number.
func rate(t *testing.T, s string) float64 {
	for suffix, k := range map[string]float64{"gbit": 1e9 / 8, "mbit": 1e6 / 8} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			return num(t, v) * k
		}
	}
	return num(t, s)
}

func dur(t *testing.T, s string) time.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
