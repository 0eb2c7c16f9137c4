package binding

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Asynchronous operations run on goroutines. Their results wait in a
// queue that the caller drains with Completions: foreign threads must not
// be called back from goroutines.

const (
	fieldSep  = "\x1f"
	recordSep = "\x1e"
	// MaxInFlight bounds asynchronous operations running at once; more
	// wait their turn.
	MaxInFlight = 64
)

var (
	opIDs    atomic.Int64
	inFlight = make(chan struct{}, MaxInFlight)
	queue    doneQueue
)

type doneQueue struct {
	mu     sync.Mutex
	items  []string
	signal chan struct{}
	once   sync.Once
}

func (q *doneQueue) sig() chan struct{} {
	q.once.Do(func() { q.signal = make(chan struct{}, 1) })
	return q.signal
}

func (q *doneQueue) push(rec string) {
	q.mu.Lock()
	q.items = append(q.items, rec)
	q.mu.Unlock()
	select {
	case q.sig() <- struct{}{}:
	default:
	}
}

func (q *doneQueue) drain(timeout time.Duration) string {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			out := strings.Join(q.items, recordSep)
			q.items = q.items[:0]
			q.mu.Unlock()
			return out
		}
		q.mu.Unlock()
		select {
		case <-q.sig():
		case <-deadline.C:
			return ""
		}
	}
}

// start runs fn on a goroutine and returns its operation id. The
// completion record is "id<US>kind<US>payload", kind empty on success and
// payload the result or the error message.
func start(fn func() (string, error)) int64 {
	id := opIDs.Add(1)
	go func() {
		inFlight <- struct{}{}
		defer func() { <-inFlight }()
		var (
			res string
			err error
		)
		func() {
			defer errs.Recover(&err)
			res, err = fn()
		}()
		kind := ""
		if err != nil {
			kind, res = errs.KindOf(err).String(), err.Error()
		}
		queue.push(itoa(id) + fieldSep + kind + fieldSep + res)
	}()
	return id
}

// Completions waits up to timeoutMs for finished operations and returns
// their records separated by RS, or "" if none finished.
func Completions(timeoutMs int64) string {
	return queue.drain(time.Duration(max(timeoutMs, 0)) * time.Millisecond)
}

func noResult(err error) (string, error) { return "", err }

// StartWrite is Write on a goroutine. raw must stay valid until completion.
func StartWrite(h int64, key string, raw []byte, dtype, shape, codecName string, gpu int) int64 {
	return start(func() (string, error) { return noResult(Write(h, key, raw, dtype, shape, codecName, gpu)) })
}

// StartReadInto is ReadInto on a goroutine.
func StartReadInto(h int64, key string, dst []byte, dtype, shape string, gpu int) int64 {
	return start(func() (string, error) { return noResult(ReadInto(h, key, dst, dtype, shape, gpu)) })
}

// StartFetch is Fetch on a goroutine; the payload is Fetch's result.
func StartFetch(h int64, key string) int64 {
	return start(func() (string, error) { return Fetch(h, key) })
}

// StartDecode is Decode on a goroutine.
func StartDecode(fh int64, dst []byte, gpu int) int64 {
	return start(func() (string, error) { return noResult(Decode(fh, dst, gpu)) })
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// StartWritePart is WritePart on a goroutine; part must stay valid until
// completion.
func StartWritePart(wh, off int64, part []byte) int64 {
	return start(func() (string, error) { return noResult(WritePart(wh, off, part)) })
}

// StartDecodeRange is DecodeRange on a goroutine.
func StartDecodeRange(fh, off int64, dst []byte, gpu int) int64 {
	return start(func() (string, error) { return noResult(DecodeRange(fh, off, dst, gpu)) })
}
