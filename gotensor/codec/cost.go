package codec

import (
	"math"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Speed is a codec's throughput on one dtype on this machine with all its
// workers, in raw bytes per second.
type Speed struct{ Encode, Decode float64 }

// Hint is what a caller knows about where a frame goes, for "auto" to
// weigh the codecs by cost. A nil Hint, or one without a link or speeds,
// leaves "auto" to pick by dtype and sample alone.
type Hint struct {
	LinkBytesPerSecond float64 // the store's observed rate for bytes to it (the marginal rate)
	LinkLatency        float64 // seconds per transfer to it, beyond its bytes
	// The same for reads, from the store; 0: as for writes.
	ReadBytesPerSecond float64
	ReadLatency        float64
	// LinkCPU is the share of this machine's CPU that moving bytes keeps
	// busy while the link runs at LinkBytesPerSecond (0: none, as with a
	// NIC that moves them itself; 1: all of it, as with loopback TCP on a
	// few cores). Coding overlaps moving only in the CPU left over.
	LinkCPU        float64
	Streamed       bool  // coding overlaps moving, both ways (a tensor in pieces, or one of a batch)
	Capacity, Used int64 // the store's capacity (0: unbounded) and bytes in use
	// Speed gives a codec's measured speed on the tensor's dtype; false
	// when it is not known.
	Speed func(Codec) (Speed, bool)
	// Factor is how much longer than expected this store's writes with a
	// codec have taken (observed / expected time; nil or 0: 1). It carries
	// what the model leaves out, such as moving bytes taking CPU from
	// coding on a loaded machine. ReadFactor is the same for its reads
	// (nil: Factor stands for reads too).
	Factor, ReadFactor func(Codec) float64
	// Observed says whether both of a codec's factors (write and read)
	// are its own, observed recently: its expected times are then
	// measured more than modelled (nil: never).
	Observed func(Codec) bool
	// Last is the codec chosen for the last tensor of this kind (nil:
	// none yet); a codec must clear the margin by keep more to replace it,
	// and less to stay (see choose).
	Last Codec
	// Set by Resolve: Expected is the chosen codec's expected write time
	// in seconds (before Factor), 0 when it chose without the model;
	// Sampled the candidates coded on the tensor's sample for their ratio.
	Expected float64
	Sampled  int
}

// Candidates are the lossless codecs "auto" weighs; planes only for floats.
var candidates = []Codec{none{}, planes{}, lz4Block{}}

// ratioSample is the most bytes of a tensor coded to estimate its ratio:
// enough for a dtype's byte statistics, little next to moving the tensor.
const ratioSample = 64 << 10

// gain is the least share of time (or space, when nearly full) a codec
// must be expected to save over the best one before it, in the order of
// candidates (none first), to be chosen. The estimates it compares are
// that noisy: codec speeds measured once on a shared machine, a link
// fitted to recent transfers, a ratio from a sample. Within it the
// simpler codec is the surer one, and a choice that flips between none
// and a codec from one tensor to the next pays for both.
const gain = 0.1

// codingGain is how much more saving a codec must be expected to bring
// for each share of its expected time that is coding (encode and decode
// seconds over its write+read seconds): those seconds rest on speeds
// measured once, alone, as the fastest of three runs, which coding on a
// CPU that moving also needs (loopback TCP, UCX's polling, a node on the
// same cores) reaches least surely. On a link that takes the CPU to move
// bytes, planes' expected saving is the difference of two sums of CPU
// time (its coding plus moving fewer bytes, against moving them all), and
// a noisy speed or link estimate flips it: the 10 and 25 Gbit/s rows of
// bench-link on two cores, whose expectations came within a few percent
// of each other. On a slow link coding is a small part of the time, and
// the saving (planes': about a third) clears it.
const codingGain = 0.1

// measuredGain replaces a codec's Need where its factors and the simpler
// codec's are all their own (Cost.Observed): both expected times are then
// what this store's recent writes and reads with each took, the model's
// noise (speeds measured alone, a link's fit) corrected by what was
// seen, and only the noise of the transfers themselves is left. With the
// full margin a codec that is truly 10-17% faster (planes at 10 Gbit/s on
// two cores shared with a node) would be passed over for good.
const measuredGain = 0.05

// keep is the hysteresis around the margins (Need) by which a codec
// replaces a simpler one: where the last tensor of a kind got the simpler
// one, the other must be expected to save keep more to replace it; where
// it got the other, that codec stays until its expected saving falls keep
// below the margin. The estimates move with every transfer (the link's
// fit, factors), and a kind whose codecs come out within the margin's
// noise of each other would flip from one weigh to the next: each flip to
// the worse one costs, and a tensor's write and its read back with another
// codec pay for both. Centred on the margin, the band biases neither way.
const keep = 0.05

// nearlyFull is the fill, after the write, from which "auto" takes the
// smallest frame whatever it costs in time.
const nearlyFull = 0.9

func (h *Hint) usable(sample []byte) bool {
	return h != nil && h.Speed != nil && h.LinkBytesPerSecond > 0 && len(sample) > 0
}

// Cost is the expected time of one codec for a tensor.
type Cost struct {
	Codec      Codec
	Ratio      float64 // raw / stored, on the tensor's sample
	Write      float64 // seconds
	Read       float64
	Stored     float64 // expected stored bytes
	Factor     float64 // Hint.Factor, which scales Write when codecs are compared
	ReadFactor float64 // Hint.ReadFactor, which scales Read
	Coding     float64 // seconds of Write and Read that are encoding and decoding (raw/speed)
	Observed   bool    // Hint.Observed: its factors are its own (see measuredGain)
}

// factorOf is f's factor for c: 1 where f is nil or has none.
func factorOf(f func(Codec) float64, c Codec) float64 {
	if f == nil {
		return 1
	}
	if v := f(c); v > 0 {
		return v
	}
	return 1
}

// readFactor is ReadFactor, or Factor where that is nil.
func (h *Hint) readFactor() func(Codec) float64 {
	if h.ReadFactor != nil {
		return h.ReadFactor
	}
	return h.Factor
}

// time is the expected write+read time, each scaled by its observed factor.
func (c *Cost) time() float64 { return c.Factor*c.Write + c.ReadFactor*c.Read }

// Costs weighs each candidate codec for a tensor of raw bytes whose sample
// is given. Moving takes move = stored/rate (the write's or the read's),
// of which LinkCPU keeps the CPU busy; coding takes code = raw/speed with all the CPU. Streamed, the
// two overlap as far as the CPU allows: time ~ max(move, code +
// LinkCPU*move) + latency; not streamed, code + move + latency. Reads
// likewise with decode speed. Codecs whose speed is unknown are left out;
// none is always in.
func (h *Hint) Costs(meta tensor.Meta, raw int64, sample []byte) []Cost {
	var out []Cost
	for _, c := range candidates {
		if !c.Supports(meta.DType) || (c.ID() == IDPlanes && !meta.DType.IsFloat()) {
			continue
		}
		sp, ok := h.Speed(c)
		if !ok || sp.Encode <= 0 || sp.Decode <= 0 {
			if c.ID() != IDNone {
				continue
			}
			sp = Speed{math.Inf(1), math.Inf(1)}
		}
		r := sampleRatio(c, meta, sample)
		if c.ID() != IDNone {
			h.Sampled++
		}
		if c.ID() != IDNone && r < 1+gain {
			continue // it would only cost time: the frame stores such chunks raw
		}
		stored := float64(raw) / r
		out = append(out, Cost{
			Codec: c, Ratio: r, Stored: stored,
			Factor: factorOf(h.Factor, c), ReadFactor: factorOf(h.readFactor(), c),
			Write: h.writeTime(float64(raw), stored, sp), Read: h.readTime(float64(raw), stored, sp),
			Coding: coding(float64(raw), sp), Observed: h.Observed != nil && h.Observed(c),
		})
	}
	return out
}

// Expect is the model's write and read time, in seconds before factors,
// of c on a tensor of raw bytes whose frame holds stored bytes: what a
// write or read with c is measured against, whatever chose c. false
// where c's speed is not known or the hint has no link.
func (h *Hint) Expect(c Codec, raw, stored int64) (write, read float64, ok bool) {
	if h == nil || h.Speed == nil || h.LinkBytesPerSecond <= 0 || raw <= 0 || stored <= 0 {
		return 0, 0, false
	}
	sp, ok := h.Speed(c)
	if !ok || sp.Encode <= 0 || sp.Decode <= 0 {
		if c.ID() != IDNone {
			return 0, 0, false
		}
		sp = Speed{math.Inf(1), math.Inf(1)} // as Costs weighs it
	}
	return h.writeTime(float64(raw), float64(stored), sp), h.readTime(float64(raw), float64(stored), sp), true
}

// writeTime and readTime are the model's times for raw bytes coded at sp
// into stored bytes.
func (h *Hint) writeTime(raw, stored float64, sp Speed) float64 {
	return h.combine(raw/sp.Encode, stored/h.LinkBytesPerSecond) + h.LinkLatency
}

func (h *Hint) readTime(raw, stored float64, sp Speed) float64 {
	rate, latency := h.readLink()
	return h.combine(raw/sp.Decode, stored/rate) + latency
}

// coding is the seconds encoding and decoding raw bytes take at sp; 0
// where they are not known (none before its copy is measured).
func coding(raw float64, sp Speed) float64 {
	if math.IsInf(sp.Encode, 1) || math.IsInf(sp.Decode, 1) {
		return 0
	}
	return raw/sp.Encode + raw/sp.Decode
}

// Need is the least share of a simpler codec's time c must be expected to
// save to be chosen over it: gain, plus codingGain for each share of c's
// time that is coding.
func (c *Cost) Need() float64 {
	if t := c.Write + c.Read; t > 0 {
		return gain + codingGain*min(c.Coding/t, 1)
	}
	return gain
}

// readLink is the rate and latency of reads.
func (h *Hint) readLink() (float64, float64) {
	if h.ReadBytesPerSecond > 0 {
		return h.ReadBytesPerSecond, h.ReadLatency
	}
	return h.LinkBytesPerSecond, h.LinkLatency
}

func (h *Hint) combine(code, move float64) float64 {
	if h.Streamed {
		cpu := min(max(h.LinkCPU, 0), 1)
		return math.Max(move, code+cpu*move)
	}
	return code + move
}

// choose picks the candidate with the least write+read time (scaled by
// its Factor), or the smallest frame when the store is nearly full (see
// gain, codingGain and keep).
func (h *Hint) choose(meta tensor.Meta, sample []byte) Codec {
	raw, _ := meta.NumBytes()
	full := h.Capacity > 0 && float64(h.Used+raw) >= nearlyFull*float64(h.Capacity)
	var best *Cost
	for _, c := range h.Costs(meta, raw, sample) {
		switch {
		case best == nil:
		case full && c.Stored < (1-gain)*best.Stored:
		case !full && c.time() < (1-h.margin(&c, best))*best.time():
		default:
			continue
		}
		best = &c
	}
	if best == nil {
		return none{}
	}
	h.Expected = best.Write
	return best.Codec
}

// margin is the share of simpler's time c must be expected to save to be
// chosen over it: c.Need() (measuredGain where both are observed), keep
// more where simpler is the last choice, keep less where c is.
func (h *Hint) margin(c, simpler *Cost) float64 {
	m := c.Need()
	if c.Observed && simpler.Observed {
		m = measuredGain
	}
	switch {
	case h.Last == nil:
	case h.Last.ID() == simpler.Codec.ID():
		m += keep
	case h.Last.ID() == c.Codec.ID():
		m -= keep
	}
	return m
}

// sampleRatio codes up to ratioSample bytes from the middle of sample with
// c; a result that does not shrink counts as raw, as the frame stores it.
func sampleRatio(c Codec, meta tensor.Meta, sample []byte) float64 {
	if c.ID() == IDNone {
		return 1
	}
	s := sample
	if len(s) > ratioSample {
		at := (len(s)/2 - ratioSample/2) &^ 15 // chunks start on 16 bytes
		s = s[at : at+ratioSample]
	}
	s = s[:len(s)&^15]
	if len(s) == 0 {
		return 1
	}
	enc, _, err := c.Encode(nil, s, Info{Meta: meta})
	if err != nil || len(enc) == 0 || len(enc) >= len(s) {
		return 1
	}
	return float64(len(s)) / float64(len(enc))
}
