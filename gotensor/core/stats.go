package core

import (
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/auto"
)

// Operation kinds counted in Stats.Ops.
const (
	OpWrite  = "write"
	OpRead   = "read"
	OpStat   = "stat"
	OpDelete = "delete"
	OpExists = "exists"
	OpKeys   = "keys"
)

// Stats is what one Store did since it was opened or its stats were
// reset. Raw bytes are the tensors' own; stored bytes the frames'; wire
// bytes what moved to or from the store (a read of part of a frame moves
// part of it). Seconds are summed over calls, so concurrent calls can add
// up to more than the time that passed; a streamed transfer overlaps
// coding with moving, and its decode seconds include waits for pieces.
type Stats struct {
	Ops    map[string]int64 `json:"ops"`    // calls by kind, failed ones included
	Errors int64            `json:"errors"` // calls that failed

	RawBytesWritten    int64 `json:"raw_bytes_written"`
	StoredBytesWritten int64 `json:"stored_bytes_written"`
	RawBytesRead       int64 `json:"raw_bytes_read"`
	StoredBytesRead    int64 `json:"stored_bytes_read"` // the frames that were read, whole
	WireBytesOut       int64 `json:"wire_bytes_out"`
	WireBytesIn        int64 `json:"wire_bytes_in"`

	EncodeSeconds float64 `json:"encode_seconds"`
	DecodeSeconds float64 `json:"decode_seconds"`
	MoveSeconds   float64 `json:"move_seconds"`  // waiting on the store: puts, gets, pieces
	WriteSeconds  float64 `json:"write_seconds"` // successful writes, end to end
	ReadSeconds   float64 `json:"read_seconds"`  // successful reads, end to end

	Ratio     float64 `json:"ratio"`      // raw / stored bytes written (0 before any write)
	WriteGBps float64 `json:"write_gbps"` // raw bytes written per write second, 1e9 bytes
	ReadGBps  float64 `json:"read_gbps"`

	// Views: reads answered by a view (View); ViewCopies: views asked for
	// that were read as copies (the frame is coded or not aligned, or the
	// store maps nothing: a store across a link); ViewBytes: the bytes of
	// the tensors viewed.
	Views      int64 `json:"views"`
	ViewCopies int64 `json:"view_copies"`
	ViewBytes  int64 `json:"view_bytes"`

	Codecs map[string]int64 `json:"codecs"` // successful writes by the codec chosen
	Auto   auto.Stats       `json:"auto"`   // how "auto" chose for whole writes
	Link   auto.Link        `json:"link"`   // the cost model's view of the link
}

// stats is a Store's running count; safe for concurrent use.
type stats struct {
	mu sync.Mutex
	s  Stats
}

func newStats() *stats {
	st := &stats{}
	st.reset()
	return st
}

func (st *stats) reset() {
	st.mu.Lock()
	st.s = Stats{Ops: map[string]int64{}, Codecs: map[string]int64{}}
	st.mu.Unlock()
}

// op counts one call of a kind and whether it failed.
func (st *stats) op(kind string, err error) {
	st.mu.Lock()
	st.s.Ops[kind]++
	if err != nil {
		st.s.Errors++
	}
	st.mu.Unlock()
}

// wrote adds a successful write.
func (st *stats) wrote(codecName string, raw, stored int64, encode, move, wall time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.RawBytesWritten += raw
	st.s.StoredBytesWritten += stored
	st.s.WireBytesOut += stored
	st.s.EncodeSeconds += encode.Seconds()
	st.s.MoveSeconds += move.Seconds()
	st.s.WriteSeconds += wall.Seconds()
	st.s.Codecs[codecName]++
}

// fetched adds bytes that came from the store and the time waited on them.
func (st *stats) fetched(wire int64, move time.Duration) {
	st.mu.Lock()
	st.s.WireBytesIn += wire
	st.s.MoveSeconds += move.Seconds()
	st.mu.Unlock()
}

// decoded adds a decode of raw bytes out of a frame of stored bytes.
func (st *stats) decoded(raw int64, decode time.Duration) {
	st.mu.Lock()
	st.s.RawBytesRead += raw
	st.s.DecodeSeconds += decode.Seconds()
	st.mu.Unlock()
}

// read adds a successful read, end to end, of a frame of stored bytes.
func (st *stats) read(stored int64, wall time.Duration) {
	st.mu.Lock()
	st.s.StoredBytesRead += stored
	st.s.ReadSeconds += wall.Seconds()
	st.mu.Unlock()
}

// viewed counts a View call that succeeded: a view, or (nil) a copy.
func (st *stats) viewed(v *View) {
	st.mu.Lock()
	if v != nil {
		st.s.Views++
		st.s.ViewBytes += int64(len(v.Data))
	} else {
		st.s.ViewCopies++
	}
	st.mu.Unlock()
}

// rows adds a successful row write or read: raw bytes of rows, the frame
// bytes of the chunks it moved, and its time end to end.
func (st *stats) rows(write bool, raw, moved int64, wall time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if write {
		st.s.RawBytesWritten += raw
		st.s.StoredBytesWritten += moved
		st.s.WireBytesOut += moved
		st.s.WriteSeconds += wall.Seconds()
		return
	}
	st.s.RawBytesRead += raw
	st.s.StoredBytesRead += moved
	st.s.WireBytesIn += moved
	st.s.ReadSeconds += wall.Seconds()
}

// snapshot copies the counts and derives ratio and throughput.
func (st *stats) snapshot() Stats {
	st.mu.Lock()
	s := st.s
	s.Ops = copyCounts(st.s.Ops)
	s.Codecs = copyCounts(st.s.Codecs)
	st.mu.Unlock()
	if s.StoredBytesWritten > 0 {
		s.Ratio = float64(s.RawBytesWritten) / float64(s.StoredBytesWritten)
	}
	if s.WriteSeconds > 0 {
		s.WriteGBps = float64(s.RawBytesWritten) / s.WriteSeconds / 1e9
	}
	if s.ReadSeconds > 0 {
		s.ReadGBps = float64(s.RawBytesRead) / s.ReadSeconds / 1e9
	}
	return s
}

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Stats reports what the store did since it was opened or ResetStats.
func (s *Store) Stats() Stats {
	out := s.stats.snapshot()
	out.Link, out.Auto = s.auto.Link(), s.auto.Stats()
	return out
}

// ResetStats zeroes the counts; the link estimate is kept.
func (s *Store) ResetStats() {
	s.stats.reset()
	s.auto.ResetStats()
}
