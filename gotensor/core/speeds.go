package core

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// speedSample is the least bytes of a tensor its codec speeds are measured
// on, speedMax the most; smaller tensors leave "auto" to its dtype rule
// until a larger one of their dtype has been written. The tensor's own
// bytes are coded, not a tiling of them: repeats within a codec's window
// would make it look faster than it is.
const (
	speedSample = 1 << 20
	speedMax    = 16 << 20
)

// speedKey names one measurement: a codec on a dtype.
type speedKey struct {
	d tensor.DType
	c codec.ID
}

// speedTable holds this machine's codec speeds, each measured once, on
// the first tensor of its dtype that "auto" weighs, with all workers.
type speedTable struct {
	mu sync.Mutex
	m  map[speedKey]codec.Speed
}

var measured = &speedTable{m: map[speedKey]codec.Speed{}}

// SpeedSource gives a codec's speed on a dtype, measuring it on sample
// when it is not known yet; false when it cannot be known.
type SpeedSource func(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool)

// MeasuredSpeed is the SpeedSource of every Store unless replaced.
func MeasuredSpeed(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool) {
	return measured.get(d, c, sample)
}

func (t *speedTable) get(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := speedKey{d, c.ID()}
	if sp, ok := t.m[k]; ok {
		return sp, true
	}
	if len(sample) < speedSample {
		return codec.Speed{}, false
	}
	sp, err := measure(d, c, sample)
	if err != nil {
		return codec.Speed{}, false
	}
	t.m[k] = sp
	return sp, true
}

// measure codes up to speedMax bytes of sample, with all workers, three
// times each way and keeps the fastest run: other work on the machine only
// ever slows a run down.
func measure(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, error) {
	n := min(len(sample), speedMax)
	n -= n % d.Size()
	buf := sample[:n]
	meta := tensor.Meta{DType: d, Shape: []int64{int64(n / d.Size())}}
	var sp codec.Speed
	back := make([]byte, n)
	for range 3 {
		start := time.Now()
		w, err := frame.NewWriter(meta, c, 0, frame.Options{}, frame.Heap)
		if err != nil {
			return sp, err
		}
		f, err := w.Encode(buf)
		if err != nil {
			return sp, err
		}
		enc := time.Since(start)
		start = time.Now()
		if _, err := frame.Decode(context.Background(), f, back, frame.DefaultLimits); err != nil {
			return sp, err
		}
		dec := time.Since(start)
		sp.Encode = max(sp.Encode, float64(n)/max(enc.Seconds(), 1e-9))
		sp.Decode = max(sp.Decode, float64(n)/max(dec.Seconds(), 1e-9))
	}
	return sp, nil
}

// hint is what "auto" knows about a write of raw bytes to s.
func (s *Store) hint(meta tensor.Meta, raw []byte) *codec.Hint {
	batch := s.calls.inFlight() > 1
	h := s.modelHint(meta, int64(len(raw)), s.link.estimate(), batch)
	u := s.cachedUsage()
	h.Capacity, h.Used = u.Capacity, u.Bytes
	h.Speed = func(c codec.Codec) (codec.Speed, bool) {
		if sp, ok := s.speed(meta.DType, c, nil); ok { // known: nothing to measure
			return sp, ok
		}
		s.link.codingBegins() // measuring codes a lot (sampling the ratio, little)
		defer s.link.codingEnds()
		return s.speed(meta.DType, c, raw)
	}
	kind, now := keyOf(meta, len(raw)), s.now()
	// Factors are learnt from transfers that ran alone; in a batch the
	// tensors share the CPU with each other's coding and moving, which
	// those did not show: there they are not taken as measured (no
	// measuredGain, and a coded codec's floored at none's).
	h.Factor = func(c codec.Codec) float64 { return s.factors.get(kind, c, false, !batch, now) }
	h.ReadFactor = func(c codec.Codec) float64 { return s.factors.get(kind, c, true, !batch, now) }
	h.Observed = func(c codec.Codec) bool { return !batch && s.factors.observed(kind, c, now) }
	return h
}

// modelHint is the model's view of a transfer of a tensor of raw bytes
// to or from s over l, beside others in flight or not (batch): the link
// and the speeds known (none measured here). A write or read is measured
// against it, whatever codec it used.
func (s *Store) modelHint(meta tensor.Meta, raw int64, l Link, batch bool) *codec.Hint {
	return &codec.Hint{
		LinkBytesPerSecond: l.BytesPerSecond,
		LinkLatency:        l.LatencySeconds,
		ReadBytesPerSecond: l.ReadBytesPerSecond,
		ReadLatency:        l.ReadLatencySeconds,
		LinkCPU:            l.CPUShare,
		// A transfer beside others (a batch) overlaps its coding with
		// their moving, as a streamed one does with its own.
		Streamed: s.streams(raw) || batch,
		Speed:    func(c codec.Codec) (codec.Speed, bool) { return s.speed(meta.DType, c, nil) },
	}
}

// factors are, per kind of tensor (dtype and size class), codec and way
// (writes, reads), how much longer than the model expected a store's
// writes or reads with it took (see codec.Hint.Factor): what the model
// leaves out, measured where it matters. Every write and read that ran
// alone teaches them, whatever chose its codec: a fixed codec's writes
// say as much of the model as "auto"'s. On two cores sharing a node on
// the loopback, planes' reads take 1.2 to 1.5 times what its decode speed
// and the read link promise. Until a read of a kind has been seen (within
// factorTTL), the write factors stand for the reads too: what slows a
// codec's writes (its coding taking the CPU moving needs) likely slows
// its reads; after, reads go by read factors alone, as writes by write
// factors. Likewise coding planes while sending takes the CPU the
// sending needs, and planes' writes take half again what the speeds
// measured alone promise.
//
// A codec not yet written with for a kind takes none's factor where none
// has been written with: what made none's writes take longer than
// expected (a link slower than its estimate, costs per call) is in every
// codec's writes. Else it is taken at the model's word (1): "auto" tries
// it once when the model says it pays, and its own writes then say
// whether it did. Taking a coded codec's factor for the others instead
// would keep a wrong pick for good: its writes took longer than expected
// for its coding, which none does not do, and none would never be tried
// again. Each write moves a factor halfway to what it saw, the first from
// what the codec was weighed with (none's factor, or 1): a pick that took
// twice what was expected flips on the next write, and one noisy write
// (the first of a store, say, that the node's memory is allocated for)
// moves a factor by half. Were the first to start from 1 where none's
// factor is larger, a codec slower than expected would look faster than
// before it was tried. A factor not observed for factorTTL is
// forgotten: the codec is taken at the model's word again and, where the
// model says it pays, tried again, so that one unlucky write (or a
// machine busy then) does not rule it out for good. 20 s: long enough
// that a store writing and reading with several codecs in turn (a round
// of bench-link's codecs takes about 6 s) keeps every codec's factors
// its own, short enough that a codec ruled out is tried again soon.
type factors struct {
	mu sync.Mutex
	m  map[factorKey]factor
}

type factor struct {
	v  float64
	at time.Time // when last observed
}

type factorKey struct {
	kind choiceKey
	c    codec.ID
	read bool // a read's factor, else a write's
}

// Observed factors are kept within [minFactor, maxFactor]: one stalled
// write must not rule a codec out for good. factorWeight is a write's
// weight.
const (
	minFactor    = 0.25
	maxFactor    = 8
	factorWeight = 0.5
	factorTTL    = 20 * time.Second
)

// get is c's factor for a kind of tensor at now, or none's where c has not
// been observed within factorTTL; 0 when neither has (the Hint takes it
// as 1). A codec that codes weighs no less than none (1 where none has no
// factor) where that is under 1: its speeds are the fastest of three runs
// alone, so its coding does not run faster than the model says, and a
// write of it that took less than expected only shows a link faster than
// its estimate, which none's bytes would have moved over as fast. Taken
// as its own, such a factor makes the codec look better than none the
// more the link's estimate was low (a probe on a busy machine, say) and
// picks it where none is faster. Where both c and none have factors of
// their own, each is taken as it is: none's then shows what the link
// estimate was off by, and c's under 1 what c truly saved; floored, c
// would be weighed at 1 whenever none's writes came out slower than
// expected, and passed over where it is faster. Only where alone says
// the factors are taken for a transfer like the ones they were learnt
// from (one alone); else c's is floored as above.
func (f *factors) get(kind choiceKey, c codec.Codec, read, alone bool, now time.Time) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if read && !f.readSeen(kind, now) {
		read = false // see factors
	}
	v := f.weighed(kind, c, read, now)
	if v == 0 || c.ID() == codec.IDNone {
		return v
	}
	floor, ok := f.fresh(factorKey{kind, codec.IDNone, read}, now)
	if !ok {
		floor = 1
	} else if _, own := f.fresh(factorKey{kind, c.ID(), read}, now); own && alone {
		return v
	}
	return max(v, min(floor, 1))
}

// observed says whether both of c's factors for a kind, write and read,
// are its own observations within factorTTL of now.
func (f *factors) observed(kind choiceKey, c codec.Codec, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, w := f.fresh(factorKey{kind, c.ID(), false}, now)
	_, r := f.fresh(factorKey{kind, c.ID(), true}, now)
	return w && r
}

// readSeen says whether a read of a kind has been observed within
// factorTTL of now; f.mu held.
func (f *factors) readSeen(kind choiceKey, now time.Time) bool {
	for k := range f.m {
		if k.read && k.kind == kind {
			if _, ok := f.fresh(k, now); ok {
				return true
			}
		}
	}
	return false
}

// weighed is get's answer; f.mu held.
func (f *factors) weighed(kind choiceKey, c codec.Codec, read bool, now time.Time) float64 {
	if v, ok := f.fresh(factorKey{kind, c.ID(), read}, now); ok {
		return v
	}
	v, _ := f.fresh(factorKey{kind, codec.IDNone, read}, now)
	return v
}

// fresh is k's factor if observed within factorTTL of now; f.mu held.
func (f *factors) fresh(k factorKey, now time.Time) (float64, bool) {
	v, ok := f.m[k]
	if !ok || now.Sub(v.at) >= factorTTL || now.Before(v.at) {
		return 0, false
	}
	return v.v, true
}

// factorMin is the least expected write time a factor is learnt from:
// shorter writes are ruled by fixed costs per call the model leaves out.
const factorMin = 5e-3

// observe adds a write (or a read) of a kind of tensor with c that took
// actual seconds where the model expected expected (its time to code and
// move). It says whether the factor moved by more than choiceDrift, so
// that a choice made with the old one is weighed again.
func (f *factors) observe(kind choiceKey, c codec.Codec, read bool, actual, expected float64, now time.Time) bool {
	if expected < factorMin || actual <= 0 {
		return false
	}
	r := min(max(actual/expected, minFactor), maxFactor)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[factorKey]factor{}
	}
	old := f.weighed(kind, c, read, now) // what c was weighed with
	if old == 0 {
		old = 1
	}
	v := old + factorWeight*(r-old)
	f.m[factorKey{kind, c.ID(), read}] = factor{v, now}
	return math.Abs(v-old) > choiceDrift*old
}

// streams says whether a tensor of raw bytes moves in pieces to and from s.
func (s *Store) streams(raw int64) bool {
	return raw >= StreamMin && store.Streams(s.st)
}

// usageCache keeps a store's usage for "auto" (is the store nearly
// full?): asking a node is a round trip, which on a busy connection waits
// behind the bulk bytes queued before it. Only the first weighing waits
// for it; after that a usage older than usageTTL is refreshed in the
// background while the weighing goes on with the one it has, so a write
// (and the writes of its kind waiting on its choice) never waits on it.
type usageCache struct {
	mu         sync.Mutex
	at         time.Time
	u          store.Usage
	refreshing bool
}

const usageTTL = time.Second

func (s *Store) cachedUsage() store.Usage {
	c := &s.usage
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		c.u, c.at = s.st.Usage(), s.now()
		return c.u
	}
	if s.now().Sub(c.at) > usageTTL && !c.refreshing {
		c.refreshing = true
		go func() {
			u := s.st.Usage()
			c.mu.Lock()
			c.u, c.at, c.refreshing = u, s.now(), false
			c.mu.Unlock()
		}()
	}
	return c.u
}

// traceAuto, when GOTENSOR_AUTO_TRACE is set, prints what "auto" weighed
// for a tensor to stderr: the link, each candidate's speeds, sample ratio
// and expected times, and the choice.
var traceAuto = os.Getenv("GOTENSOR_AUTO_TRACE") != ""

func (s *Store) trace(meta tensor.Meta, raw []byte, h *codec.Hint, chosen codec.Codec) {
	var b strings.Builder
	fmt.Fprintf(&b, "gotensor auto: %s %s%v %d B: link out %.3g B/s + %.3g s, in %.3g B/s + %.3g s, cpu %.2f streamed %v -> %s\n",
		s.URL(), meta.DType, meta.Shape, len(raw), h.LinkBytesPerSecond, h.LinkLatency, h.ReadBytesPerSecond, h.ReadLatency, h.LinkCPU, h.Streamed, chosen.Name())
	for _, c := range h.Costs(meta, int64(len(raw)), raw) {
		sp, _ := h.Speed(c.Codec)
		fmt.Fprintf(&b, "  %-6s enc %.3g dec %.3g B/s ratio %.3f write %.4g read %.4g s (coding %.4g) factors %.3g / %.3g observed %v need %.3g\n",
			c.Codec.Name(), sp.Encode, sp.Decode, c.Ratio, c.Write, c.Read, c.Coding, c.Factor, c.ReadFactor, c.Observed, c.Need())
	}
	os.Stderr.WriteString(b.String())
}

// calls counts a store's writes and reads in flight: a write's time says
// how far the model was off only when it ran alone, as the model weighs
// one tensor at a time. In a batch each write also waits on the others'
// moving and coding, and whichever codec a batch used would take the
// blame for the whole batch.
type calls struct {
	mu      sync.Mutex
	active  int
	started uint64
}

// callToken is what begin hands end: whether the call began alone, and
// how many calls had started by then.
type callToken struct {
	alone   bool
	started uint64
}

// inFlight is the number of calls in flight.
func (c *calls) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active
}

func (c *calls) begin() callToken {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active++
	c.started++
	return callToken{alone: c.active == 1, started: c.started}
}

// end says whether the call begun with t ran alone: none other was in
// flight when it began, and none began before it ended.
func (c *calls) end(t callToken) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
	return t.alone && c.started == t.started
}
