package serve

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Streamed frames. A client sends a large frame's payload in parts as they
// are encoded, then its header; the server assembles the frame and stores
// it only at commit, so a lost connection leaves nothing behind. Parts hold
// their share of the node's budget from arrival to commit. The frame is
// assembled in memory the store lends, and the parts' memory, once copied
// into it, goes back to the budget for the next upload's parts. A client
// that announces the frame's layout first (put-layout, where the server's
// hello offers wire.FlagLayout) has the frame lent and its budget held at
// once, and each part is received straight into its place (Slot): nothing
// is copied at the commit.

// An upload that waits longer than Config.UploadIdle for its next part or
// its commit is dropped and gives its budget back: a client that stalls
// cannot hold the node's capacity. Its key stays open, failed, until the
// client's commit or abort, so the client hears why rather than of parts
// missing.

// Uploads are one connection's streamed writes in progress.
type Uploads struct {
	mu     sync.Mutex
	open   map[string]*upload
	limit  uint64
	budget *Budget
	idle   time.Duration // see Config.UploadIdle (<= 0: none)
	logf   func(format string, args ...any)
}

type upload struct {
	parts    *store.Parts
	releases []func()
	lent     [][]byte     // parts' buffers, to give back once copied or dropped
	giveBack func([]byte) // where they go
	touched  time.Time    // the last part's arrival
	timer    *time.Timer  // drops the upload once idle
	failed   error        // why it was dropped (its parts are gone)
}

func (u *upload) release() {
	u.recycle()
	for _, r := range u.releases {
		r()
	}
	u.releases = nil
	if u.timer != nil {
		u.timer.Stop()
	}
}

// recycle gives the parts' buffers back; the parts must no longer be used.
func (u *upload) recycle() {
	for _, b := range u.lent {
		u.giveBack(b)
	}
	u.lent = nil
}

// NewUploads keeps one connection's uploads, of frames of at most
// cfg.MaxMessage bytes received within cfg.Budget, for cfg.UploadIdle
// between parts.
func NewUploads(cfg Config) *Uploads {
	cfg = cfg.WithDefaults()
	return &Uploads{open: map[string]*upload{}, limit: cfg.MaxMessage, budget: cfg.Budget, idle: cfg.UploadIdle, logf: cfg.Logf}
}

// touch notes a part's arrival: the upload's idle time starts again.
func (u *Uploads) touch(key string, up *upload) {
	if u.idle <= 0 {
		return
	}
	up.touched = time.Now()
	if up.timer == nil {
		up.timer = time.AfterFunc(u.idle, func() { u.expire(key, up) })
	}
}

// expire drops up, key's upload, if it has been idle for u.idle.
func (u *Uploads) expire(key string, up *upload) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.open[key] != up || up.failed != nil {
		return // committed, aborted or dropped meanwhile
	}
	if wait := u.idle - time.Since(up.touched); wait > 0 {
		up.timer.Reset(wait)
		return
	}
	held := up.parts.Size()
	up.release()
	up.parts = nil
	up.failed = errs.New(errs.Timeout, "streamed write of %q dropped: no part or commit for %v (its parts are gone: write it again)", key, u.idle)
	u.logf("gotensor serve: streamed write of %d bytes dropped after %v without a part or commit", held, u.idle)
}

// Handle serves put-layout, put-part and put-abort, and turns put-commit
// into the put of the assembled frame; it returns the response for the
// first three, or nil when m (rewritten, releasing the parts' budget when
// done) goes on to the store.
func (u *Uploads) Handle(m *wire.Message) (resp *wire.Message) {
	defer Recover(m, &resp)
	if m.Refused != nil {
		u.drop(m.Key)
		return wire.Fail(m, m.Refused)
	}
	if err := store.ValidateKey(m.Key); err != nil {
		m.Done()
		return wire.Fail(m, err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	up := u.open[m.Key]
	switch m.Op {
	case wire.OpPutPart:
		if up == nil {
			if len(u.open) >= wire.MaxUploads {
				m.Done()
				return wire.Fail(m, tooManyUploads())
			}
			up = &upload{parts: store.NewParts(int64(u.limit))}
			u.open[m.Key] = up
		}
		if up.failed != nil { // dropped while idle: this part has nothing to join
			if m.Lent != nil {
				m.Lent(m.Payload)
			}
			m.Done()
			return wire.Fail(m, up.failed)
		}
		u.touch(m.Key, up)
		if up.parts.Placed() { // in the frame (received there, or copied now): its own budget and memory go back
			err := up.parts.Add(int64(m.Arg), m.Payload)
			if m.Lent != nil {
				m.Lent(m.Payload)
			}
			m.Done()
			if err != nil {
				u.dropLocked(m.Key)
				return wire.Fail(m, err)
			}
			return wire.Reply(m)
		}
		if m.Release != nil { // the part keeps its budget until the commit
			up.releases = append(up.releases, m.Release)
			m.Release = nil
		}
		if err := up.parts.Add(int64(m.Arg), m.Payload); err != nil {
			u.dropLocked(m.Key)
			if m.Lent != nil {
				m.Lent(m.Payload)
			}
			return wire.Fail(m, err)
		}
		if m.Lent != nil {
			up.lent, up.giveBack = append(up.lent, m.Payload), m.Lent
		}
		return wire.Reply(m)
	case wire.OpPutLayout:
		defer m.Done()
		if up != nil {
			u.dropLocked(m.Key)
			return wire.Fail(m, errs.New(errs.InvalidArgument, "layout of %q announced after its parts", m.Key))
		}
		if len(u.open) >= wire.MaxUploads {
			return wire.Fail(m, tooManyUploads())
		}
		up, err := u.laidOut(m)
		if err != nil {
			return wire.Fail(m, err)
		}
		u.open[m.Key] = up
		u.touch(m.Key, up)
		return wire.Reply(m)
	case wire.OpPutAbort:
		u.dropLocked(m.Key)
		return wire.Reply(m)
	case wire.OpPutCommit:
		delete(u.open, m.Key)
		if up == nil {
			m.Done()
			return wire.Fail(m, errs.New(errs.InvalidArgument, "commit of %q without parts", m.Key))
		}
		if up.timer != nil {
			up.timer.Stop()
		}
		if up.failed != nil {
			m.Done()
			return wire.Fail(m, up.failed)
		}
		f, err := commit(up.parts, m.Payload, u.lender())
		up.recycle() // copied into f, or dropped
		if err != nil {
			up.release()
			m.Done()
			return wire.Fail(m, err)
		}
		m.Op, m.Payload, m.Lent = wire.OpPut, f, u.lender().ReturnFrame
		prev := m.Release
		m.Release = func() {
			up.release()
			if prev != nil {
				prev()
			}
		}
		return nil
	}
	return wire.Fail(m, errs.New(errs.Internal, "not a streamed-write op"))
}

// laidOut starts the upload m (put-layout) announces: its frame lent and
// its bytes held against the budget from now until the commit's put is
// done. A frame lent this way never goes back to the lender unless it is
// committed (and refused): a part may still be arriving in it when the
// upload is dropped.
func (u *Uploads) laidOut(m *wire.Message) (*upload, error) {
	if len(m.Payload) != 4 {
		return nil, errs.New(errs.InvalidArgument, "put-layout of %q: payload of %d bytes, want 4", m.Key, len(m.Payload))
	}
	hdr, payload := uint64(binary.LittleEndian.Uint32(m.Payload)), m.Arg
	if hdr == 0 || payload == 0 || payload > u.limit || hdr > u.limit-payload || hdr+payload > uint64(math.MaxInt) {
		return nil, errs.New(errs.InvalidArgument, "put-layout of %q: %d header and %d payload bytes pass the limit of %d", m.Key, hdr, payload, u.limit)
	}
	up := &upload{parts: store.NewParts(int64(u.limit))}
	if u.budget != nil {
		release, err := u.budget.ReserveFor(m, hdr+payload)
		if err != nil {
			return nil, err
		}
		up.releases = append(up.releases, release)
	}
	up.parts.Place(u.lender().LendFrame(int(hdr+payload)), int(hdr))
	return up, nil
}

// Slot is where the payload of n bytes of m lands when m is a part of an
// upload laid out up front (put-layout): its place in the frame, else nil.
// The connection's reader calls it before reading the payload.
func (u *Uploads) Slot(m *wire.Message, n uint64) []byte {
	if m.Op != wire.OpPutPart || n == 0 || n > math.MaxInt32 {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	up := u.open[m.Key]
	if up == nil || up.failed != nil || up.parts == nil {
		return nil
	}
	return up.parts.Slot(int64(m.Arg), int(n))
}

// tooManyUploads refuses an upload past the connection's limit.
func tooManyUploads() error {
	return errs.New(errs.InvalidArgument, "more than %d streamed writes open on one connection", wire.MaxUploads)
}

// lender lends the memory frames are assembled in (nil: new memory).
func (u *Uploads) lender() store.Lender {
	if u.budget == nil || u.budget.lender == nil {
		return heapLender{}
	}
	return u.budget.lender
}

// heapLender is new memory, for a store that does not recycle frames.
type heapLender struct{}

func (heapLender) LendFrame(n int) []byte { return make([]byte, n) }
func (heapLender) ReturnFrame([]byte)     {}

// commit assembles the frame in memory l lends once the parts tile the
// payload hdr announces.
func commit(p *store.Parts, hdr []byte, l store.Lender) ([]byte, error) {
	h, err := frame.ParseHeader(hdr, frame.Limits{MaxRawBytes: 1 << 62})
	if err != nil {
		return nil, err
	}
	if h.Size() != len(hdr) {
		return nil, errs.New(errs.CorruptData, "streamed frame header is %d bytes, its fields say %d", len(hdr), h.Size())
	}
	if got, want := p.Size(), h.PayloadSize(); got != want {
		return nil, errs.New(errs.CorruptData, "streamed frame has %d payload bytes, its header says %d", got, want)
	}
	return p.FrameIn(hdr, l) // refuses gaps and overlaps
}

func (u *Uploads) drop(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropLocked(key)
}

func (u *Uploads) dropLocked(key string) {
	if up := u.open[key]; up != nil {
		up.release()
		delete(u.open, key)
	}
}

// Close drops every upload in progress (the connection ended).
func (u *Uploads) Close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k := range u.open {
		u.dropLocked(k)
	}
}
