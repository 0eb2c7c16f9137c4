package auto

import (
	"context"
	"math/bits"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Spec is the codec spec that leaves the codec to the Chooser.
const Spec = "auto"

var none, _ = codec.ByName("none")

// Chooser resolves the codec spec of every write to one store, choosing
// where it is "auto", and learns from what the store's writes, reads and
// transfers took: its user calls Choose once per write and Read once per
// read, reports each done, and calls Begin and End around every transfer
// of bytes. Safe for concurrent use.
type Chooser struct {
	o        Options
	url      string
	prober   Prober
	probed   sync.Once
	weighing sync.Mutex // held while a kind is weighed: a batch's writes of a kind take the first's choice

	mu      sync.Mutex // guards what follows
	link    linkFit
	factors map[factorKey]factor
	choices map[kind]choice
	stats   Stats
	active  int    // writes and reads in flight
	started uint64 // writes and reads begun
}

// kind is a class of tensors that share a choice and factors: a dtype
// and a size class (a power of two of raw bytes).
type kind struct {
	d    tensor.DType
	size int
}

func kindOf(d tensor.DType, raw int) kind { return kind{d, bits.Len(uint(raw))} }

type choice struct {
	c     codec.Codec
	at    time.Time
	stale bool // a factor it was weighed with has since moved past Drift
}

// Stats count how "auto" chose the codec of writes of CodeMin bytes or
// more: each reused the recent choice for its kind of tensor, or weighed
// the candidates because the kind was new, its choice had expired, or a
// factor it was weighed with had moved. Flips are weighs that changed the
// kind's codec; Samples the candidates coded on samples for their ratio.
type Stats struct {
	Reused  int64 `json:"reused"`
	Weighed int64 `json:"weighed"`
	New     int64 `json:"new"`
	Expired int64 `json:"expired"`
	Factor  int64 `json:"factor"`
	Flips   int64 `json:"flips"`
	Samples int64 `json:"samples"`
}

// New is a Chooser for the store at url, whose scheme picks the link's
// seed, and whose link p probes (nil: none).
func New(url string, p Prober, o Options) *Chooser {
	c := &Chooser{o: o, url: url, prober: p, factors: map[factorKey]factor{}, choices: map[kind]choice{}}
	if c.o.Speed == nil {
		c.o.Speed = c.measuredSpeed
	}
	c.link = newLinkFit(url, &c.o)
	return c
}

func (c *Chooser) locked(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// Write is one write's codec and its parameter; report it with Done.
type Write struct {
	Codec codec.Codec
	Param uint32
	c     *Chooser // nil: nothing to learn
	call  call
	k     kind
	raw   int
	m     model // what the write is measured against
	chose time.Time
	cpu   CPUTimes // at the choice, where cpuOK
	cpuOK bool
}

// Choose resolves spec for a write of a tensor whose bytes are raw and
// that streams or not. For "auto": without the bytes (nil: a write staged
// part by part) planes where it codes the dtype, else none; none under
// CodeMin bytes; else the candidate with the least expected write+read
// time, chosen once per kind of tensor within ChoiceTTL. A store across a
// link is probed before the first write that can teach a factor, so that
// writes are weighed against a measured link, not a seed.
func (c *Chooser) Choose(ctx context.Context, spec string, meta tensor.Meta, raw []byte, streamed bool) (w Write, err error) {
	switch {
	case spec != Spec:
		w.Codec, w.Param, err = codec.Parse(spec)
	case raw == nil:
		w.Codec = none
		if planes, err := codec.ByName("planes"); err == nil && planes.Supports(meta.DType) {
			w.Codec = planes
		}
	case len(raw) < c.o.CodeMin:
		w.Codec = none
	}
	if err != nil || raw == nil {
		return w, err
	}
	w.c, w.call, w.k, w.raw = c, c.begin(), kindOf(meta.DType, len(raw)), len(raw)
	if len(raw) >= c.o.CodeMin && c.prober != nil {
		c.probed.Do(func() { c.probe(ctx) })
	}
	if w.Codec == nil {
		w.Codec = c.choose(meta, raw, streamed)
	}
	if streamed && w.Codec.ID() == codec.IDNone {
		w.cpu, w.cpuOK = c.o.CPU()
	}
	w.m, w.chose = c.model(streamed), c.o.Now()
	return w, nil
}

// choose reuses the choice for a tensor's kind or weighs the candidates.
func (c *Chooser) choose(meta tensor.Meta, raw []byte, streamed bool) codec.Codec {
	c.weighing.Lock()
	defer c.weighing.Unlock()
	k, now := kindOf(meta.DType, len(raw)), c.o.Now()
	c.mu.Lock()
	last, seen := c.choices[k]
	if seen && !last.stale && now.Sub(last.at) < c.o.ChoiceTTL && !now.Before(last.at) {
		c.stats.Reused++
		c.mu.Unlock()
		return last.c
	}
	c.mu.Unlock()
	costs, samples := c.costs(meta, raw, c.model(streamed))
	best := c.pick(costs, last.c).c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.choices[k] = choice{c: best, at: now}
	c.stats.Weighed++
	c.stats.Samples += int64(samples)
	switch {
	case !seen:
		c.stats.New++
	case last.stale:
		c.stats.Factor++
	default:
		c.stats.Expired++
	}
	if seen && last.c.ID() != best.ID() {
		c.stats.Flips++
	}
	return best
}

// model is what a transfer starting now is weighed with: a batch where
// other calls are in flight.
func (c *Chooser) model(streamed bool) (m model) {
	c.locked(func() { m = model{Link: c.link.l, streamed: streamed, batch: c.active > 1} })
	return m
}

// call is a write or read in flight: its time says how far the model was
// off only where it ran alone, as the model weighs one tensor at a time
// (in a batch a call also waits on the others): none other was in flight
// when it began, and none began before it ended.
type call struct {
	alone   bool
	started uint64
}

func (c *Chooser) begin() call {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active++
	c.started++
	return call{alone: c.active == 1, started: c.started}
}

func (c *Chooser) end(t call) (alone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
	return t.alone && c.started == t.started
}

// Done reports the write over, with a frame of stored bytes or err. A
// streamed write of none tells the CPU share moving takes; one that ran
// alone teaches its codec's write factor.
func (w *Write) Done(stored int64, err error) {
	c := w.c
	if c == nil {
		return
	}
	if alone := c.end(w.call); err == nil {
		if v := c.cpuSince(w.cpu, w.cpuOK); v >= 0 {
			c.locked(func() { c.link.observeCPU(v) })
		}
		if alone {
			c.learn(w.k, w.Codec, ToStore, w.m, w.raw, stored, c.o.Now().Sub(w.chose))
		}
	}
}

// Read is one read of a tensor; report it with Done.
type Read struct {
	c    *Chooser
	call call
	m    model
}

// Read starts a read, from its fetch to its last decode.
func (c *Chooser) Read() Read { return Read{c: c, call: c.begin(), m: c.model(false)} }

// Done reports the read over: a frame of stored bytes coded with id, of a
// tensor of raw bytes of dtype d that streamed or not, took from its
// start to its last decode where it decoded the whole tensor (else 0).
// One that ran alone teaches its codec's read factor.
func (r *Read) Done(d tensor.DType, id codec.ID, raw, stored int64, streamed bool, took time.Duration) {
	if cd, err := codec.ByID(id); r.c.end(r.call) && took > 0 && err == nil {
		r.m.streamed = streamed
		r.c.learn(kindOf(d, int(raw)), cd, FromStore, r.m, int(raw), stored, took)
	}
}

// learn weighs a transfer with cd that took took against what m expected
// of it, and marks its kind's choice stale where the factor moved.
func (c *Chooser) learn(k kind, cd codec.Codec, w Way, m model, raw int, stored int64, took time.Duration) {
	if raw < c.o.CodeMin {
		return // ruled by costs per call
	}
	sp, ok := c.speed(k.d, cd, nil)
	if !ok {
		return // not modelled
	}
	expected, read := m.times(float64(raw), float64(stored), sp)
	if w == FromStore {
		expected = read
	}
	c.locked(func() {
		if ch, ok := c.choices[k]; c.observe(k, cd.ID(), w, took.Seconds(), expected, c.o.Now()) && ok {
			ch.stale = true
			c.choices[k] = ch
		}
	})
}

// Begin marks a transfer of bytes to or from the store starting.
func (c *Chooser) Begin() { c.locked(func() { c.link.begin(c.o.Now()) }) }

// End reports a transfer begun with Begin over: it moved n bytes way w
// (n < 0: it failed), of a frame coded with a codec other than none or not.
func (c *Chooser) End(w Way, n int64, coded bool) {
	c.locked(func() { c.link.end(c.o.Now(), w, n, coded) })
}

// Link is the link's estimate now.
func (c *Chooser) Link() (l Link) {
	c.locked(func() { l = c.link.l })
	return l
}

// Stats are the counts since New or ResetStats.
func (c *Chooser) Stats() (s Stats) {
	c.locked(func() { s = c.stats })
	return s
}

func (c *Chooser) ResetStats() { c.locked(func() { c.stats = Stats{} }) }
