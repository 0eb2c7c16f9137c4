package binding

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
)

// Asynchronous operations run on goroutines. Their results wait in a
// queue that the caller drains with Completions: foreign threads must not
// be called back from goroutines. An operation on a key takes its turn in
// the key's order when it is started (see order.go).

// MaxInFlight bounds asynchronous operations running at once; more wait
// their turn.
const MaxInFlight = 64

// Completion is the result of one asynchronous operation. A failed one
// carries its error as fields (see Failure).
type Completion struct {
	Op      int64 `json:"op"`
	Value   int64 `json:"value"` // the operation's result (Read: a fetch handle or 0)
	Failure       // zero on success
}

// Failure is an error as foreign callers receive it: its kind
// (errs.Kind's name), the key it is about ("" for none) and its message
// without the kind (errs.Message).
type Failure struct {
	Kind    string `json:"kind,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message,omitempty"`
}

// FailureOf describes err; the zero Failure for nil.
func FailureOf(err error) Failure {
	if err == nil {
		return Failure{}
	}
	return Failure{Kind: errs.KindOf(err).String(), Key: errs.KeyOf(err), Message: errs.Message(err)}
}

var (
	opIDs    atomic.Int64
	inFlight = make(chan struct{}, MaxInFlight)
	queue    doneQueue
	running  sync.Map // op id -> *runningOp
)

type doneQueue struct {
	mu     sync.Mutex
	items  []Completion
	signal chan struct{}
	once   sync.Once
}

func (q *doneQueue) sig() chan struct{} {
	q.once.Do(func() { q.signal = make(chan struct{}, 1) })
	return q.signal
}

func (q *doneQueue) push(c Completion) {
	q.mu.Lock()
	q.items = append(q.items, c)
	q.mu.Unlock()
	select {
	case q.sig() <- struct{}{}:
	default:
	}
}

// take removes and returns the completions of ops still in the queue.
func (q *doneQueue) take(ops map[int64]bool) []Completion {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Completion
	kept := q.items[:0]
	for _, c := range q.items {
		if ops[c.Op] {
			out = append(out, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(q.items[len(kept):])
	q.items = kept
	return out
}

func (q *doneQueue) drain(timeout time.Duration) []Completion {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			out := q.items
			q.items = nil
			q.mu.Unlock()
			return out
		}
		q.mu.Unlock()
		select {
		case <-q.sig():
		case <-deadline.C:
			return nil
		}
	}
}

// runningOp is an operation started and not yet reported.
type runningOp struct {
	cancel   context.CancelFunc
	state    atomic.Int32  // opRunning, then opCommitted (its change reached the store) or opCancelled
	finished atomic.Bool   // its result is being reported: Cancel no longer applies
	to       atomic.Int32  // where its completion goes: toUndecided, then toQueue, toHeld or toClaim
	taken    atomic.Bool   // its goroutine or a Claim has begun it (runs it, or ends it early)
	reported chan struct{} // closed once it is reported
	result   Completion    // a claimed operation's completion, set before reported is closed
	runHere  func() bool   // runs it on the caller's thread if nothing has begun it and its turn has come
}

const (
	opRunning int32 = iota
	opCommitted
	opCancelled
)

const (
	toUndecided int32 = iota
	toQueue
	toHeld // kept for a Claim to come (see Hold)
	toClaim
)

// report hands c, the operation's completion, to the Claim that waits for
// it, or keeps it for one (a held operation), or else gives it to the
// queue. It says whether the operation is done with: not a held one, which
// stays in running until claimed.
func (op *runningOp) report(c Completion) bool {
	op.finished.Store(true)
	if op.to.CompareAndSwap(toUndecided, toQueue) {
		queue.push(c)
		close(op.reported)
		return true
	}
	op.result = c
	close(op.reported)
	return op.to.Load() != toHeld
}

// start runs fn on a goroutine and returns its operation id. With a key,
// fn runs after the operations started on (h, key) before it. s gives the
// default timeout (nil: none). A Claim of the operation that comes before
// its goroutine has begun it runs it on the claiming thread instead (see
// Claim); whichever takes it first runs it, the other leaves it.
func start(s *openStore, h int64, key string, timeoutNs int64, fn func(ctx context.Context) (int64, error)) int64 {
	id := opIDs.Add(1)
	var t *turn
	if key != "" {
		t = takeTurn(h, key)
	}
	base, stop := callContext(s, timeoutNs)
	ctx, cancel := context.WithCancel(base)
	op := &runningOp{cancel: cancel, reported: make(chan struct{})}
	ctx = core.WithCommitGate(ctx, func() bool { // a row write's retries ask again: committed stays committed
		return op.state.CompareAndSwap(opRunning, opCommitted) || op.state.Load() == opCommitted
	})
	end := func(v int64, err error) { // by whoever took it: the key's next turn, then the report
		if t != nil {
			t.finish()
		}
		cancel()
		stop()
		if op.report(Completion{Op: id, Value: v, Failure: FailureOf(err)}) {
			running.Delete(id)
		}
	}
	op.runHere = func() bool {
		if (t != nil && !t.come()) || !op.taken.CompareAndSwap(false, true) {
			return false
		}
		v, err := runOp(ctx, fn)
		end(v, err)
		return true
	}
	running.Store(id, op)
	go func() {
		var err error
		if t != nil {
			err = t.wait(ctx)
		}
		if err == nil {
			select {
			case inFlight <- struct{}{}:
			case <-ctx.Done():
				err = ended(ctx)
			}
		}
		if !op.taken.CompareAndSwap(false, true) { // a Claim ran it
			if err == nil {
				<-inFlight
			}
			return
		}
		var v int64
		if err == nil {
			v, err = runOp(ctx, fn)
			<-inFlight
		}
		end(v, err)
	}()
	return id
}

// runOp runs fn, a panic in it becoming its error.
func runOp(ctx context.Context, fn func(ctx context.Context) (int64, error)) (v int64, err error) {
	defer errs.Recover(&err)
	return fn(ctx)
}

// Cancel stops a running asynchronous operation (its context ends) and
// reports whether it cancelled it: true means the operation changes
// nothing in the store (a write or delete had not reached its commit
// point, and now never will) and its result is to be dropped; false, that
// it had finished, or had begun to change the store (then it ends with
// its result, or with Timeout where the store was still at work).
func Cancel(op int64) bool {
	v, ok := running.Load(op)
	if !ok {
		return false
	}
	r := v.(*runningOp)
	if r.finished.Load() {
		return false
	}
	won := r.state.CompareAndSwap(opRunning, opCancelled)
	r.cancel()
	return won
}

// Hold keeps the completion of op, an operation started and not yet
// reported, for a Claim: it never goes to the queue, so the queue's reader
// is not woken for it, and a Claim after it finished still finds it. It
// reports whether it held it (false: op finished already, or is unknown,
// and its completion is in the queue). A held operation stays known until
// claimed: whoever holds one must claim it.
func Hold(op int64) bool {
	r, ok := running.Load(op)
	return ok && r.(*runningOp).to.CompareAndSwap(toUndecided, toHeld)
}

// Claim waits for the operations ops to finish and returns their
// completions, but for those the queue's reader has drained already: the
// caller learns their results without waiting for that reader. Operations
// still running report to Claim instead of the queue, held ones (Hold)
// whenever they finished; other finished ones are taken out of the queue.
// An operation that no goroutine has begun yet, and whose turn on its key
// has come, runs on the caller's thread (in the order of ops: list a key's
// operations in the order they were started), as a synchronous call
// would: a caller that waits right after starting one pays no hand-off
// between threads.
func Claim(ops []int64) []Completion {
	var mine []*runningOp
	var ids []int64
	queued := map[int64]bool{}
	for _, id := range ops {
		if v, ok := running.Load(id); ok {
			if r := v.(*runningOp); r.to.CompareAndSwap(toUndecided, toClaim) || r.to.CompareAndSwap(toHeld, toClaim) {
				mine, ids = append(mine, r), append(ids, id)
				continue
			}
		}
		queued[id] = true
	}
	var out []Completion
	if len(queued) > 0 {
		out = queue.take(queued)
	}
	for _, op := range mine {
		op.runHere()
	}
	for i, op := range mine {
		<-op.reported
		out = append(out, op.result)
		running.Delete(ids[i]) // a held operation that reported before is known until now
	}
	return out
}

// Completions waits up to timeoutMs for finished operations and returns
// them as a JSON array of Completion records, or "" if none finished.
func Completions(timeoutMs int64) string {
	return CompletionsJSON(queue.drain(time.Duration(max(timeoutMs, 0)) * time.Millisecond))
}

// CompletionsJSON is cs as a JSON array, or "" for none.
func CompletionsJSON(cs []Completion) string {
	if len(cs) == 0 {
		return ""
	}
	b, err := json.Marshal(cs)
	if err != nil { // unreachable: Completion holds only strings and ints
		return `[]`
	}
	return string(b)
}

// storeFor is the store behind h, or nil (an unknown handle fails inside
// the operation, reported through its completion).
func storeFor(h int64) *openStore {
	releaseFreed()
	s, _ := stores.get(h)
	return s
}

func noValue(err error) (int64, error) { return 0, err }

// startOn starts fn, an operation on key of the store behind h (s, nil
// for a bad handle: the operation then fails with the handle's error), in
// key's order.
func startOn(s *openStore, h int64, key string, timeoutNs int64, fn func(ctx context.Context) error) int64 {
	return start(s, h, key, timeoutNs, func(ctx context.Context) (int64, error) {
		if s == nil {
			return noValue(badStore(h))
		}
		return noValue(fn(ctx))
	})
}

// StartWrite is Write on a goroutine. raw and shape must stay valid until
// completion.
func StartWrite(h int64, key string, raw []byte, dtype int64, shape []int64, codecName string, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		return write(ctx, s, key, raw, dtype, shape, codecName, gpu)
	})
}

// StartReadInto is ReadInto on a goroutine.
func StartReadInto(h int64, key string, dst []byte, dtype int64, shape []int64, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		return readInto(ctx, s, key, dst, dtype, shape, gpu)
	})
}

// StartDelete is Delete on a goroutine.
func StartDelete(h int64, key string, timeoutNs int64) int64 {
	s := storeFor(h)
	return startOn(s, h, key, timeoutNs, func(ctx context.Context) error {
		return ctxError(ctx, s.Delete(ctx, key))
	})
}

// StartRead is Read on a goroutine; the completion's value is Read's
// result, and meta (and scratch) are filled when it completes.
func StartRead(h int64, key string, scratch []byte, meta []int64, gpu int, timeoutNs int64) int64 {
	s := storeFor(h)
	return start(s, h, key, timeoutNs, func(ctx context.Context) (int64, error) {
		if s == nil {
			return noValue(badStore(h))
		}
		return read(ctx, s, key, scratch, meta, gpu)
	})
}

// StartDecode is Decode on a goroutine.
func StartDecode(fh int64, dst []byte, gpu int, timeoutNs int64) int64 {
	return start(nil, 0, "", timeoutNs, func(ctx context.Context) (int64, error) {
		return noValue(decodeHandle(ctx, fh, dst, gpu))
	})
}

// StartWritePart is WritePart on a goroutine; part must stay valid until
// completion.
func StartWritePart(wh, off int64, part []byte) int64 {
	return start(nil, 0, "", -1, func(context.Context) (int64, error) { return noValue(WritePart(wh, off, part)) })
}

// StartDecodeRange is DecodeRange on a goroutine.
func StartDecodeRange(fh, off int64, dst []byte, gpu int, timeoutNs int64) int64 {
	return start(nil, 0, "", timeoutNs, func(ctx context.Context) (int64, error) {
		return noValue(decodeRangeHandle(ctx, fh, off, dst, gpu))
	})
}

func badStore(h int64) error { _, err := stores.get(h); return err }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
