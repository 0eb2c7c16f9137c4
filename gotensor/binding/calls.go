package binding

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
)

// Every binding call takes a timeout in nanoseconds: > 0 bounds the call,
// 0 uses the store's default (its URL's ?timeout=, else none), < 0 means no
// deadline. An expired or cancelled call fails with errs.Timeout.

// openStore is a store behind a handle, with its default call timeout.
type openStore struct {
	*core.Store
	timeout time.Duration
}

// root is the context every call derives from: nothing above the binding
// can cancel a call except its own timeout or cancellation.
var root = context.Background()

// callContext is the context of one call on s.
func callContext(s *openStore, timeoutNs int64) (context.Context, context.CancelFunc) {
	d := time.Duration(timeoutNs)
	if timeoutNs == 0 && s != nil {
		d = s.timeout
	}
	if d > 0 {
		return context.WithTimeout(root, d)
	}
	return root, func() {}
}

// urlTimeout reads the ?timeout= option of a store URL (Go duration
// syntax, "30s"), or 0 without one.
func urlTimeout(raw string) (time.Duration, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, nil // the store reports a bad URL itself
	}
	v := u.Query().Get("timeout")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errs.New(errs.InvalidArgument, "bad timeout %q in store URL (want a positive duration such as 30s)", v)
	}
	return d, nil
}

// ctxError is err, classified as Timeout when ctx expired or was
// cancelled. A call that returned nil succeeded, whatever its context
// says now: what it wrote is stored (core's commit point checks the
// context before anything is).
func ctxError(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil || err == nil || errs.Is(err, errs.Timeout) {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errs.Is(err, errs.Internal) && !errs.Is(err, errs.Unavailable) {
		return err // a real answer that arrived as the deadline passed
	}
	return errs.Wrap(errs.Timeout, err, "operation %s", endedWhy(ctx))
}

// ended is the Timeout error of a call whose context ended before it began.
func ended(ctx context.Context) error {
	return errs.New(errs.Timeout, "operation %s", endedWhy(ctx))
}

func endedWhy(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.Canceled) {
		return "cancelled"
	}
	return "deadline exceeded"
}
