package core

import (
	"context"
	"errors"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A write (or delete) that fails with Timeout or Cancelled has changed
// nothing: the frame goes to the store only at its commit point, which
// checks the call's context and its commit gate first. Once the store has
// the frame, the call succeeds, whatever its context says afterwards.

type gateKey struct{}

// WithCommitGate makes the writes and deletes under ctx call gate at their
// commit point, just before the store changes (a row write that retries
// asks again; a gate says true again once it did); a gate that returns
// false (its operation was cancelled meanwhile) stops the call there, with
// nothing stored. A caller that can cancel an operation it reported
// running uses it to decide, with the operation, which of the two won.
func WithCommitGate(ctx context.Context, gate func() bool) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

// commit is the commit point's check: nil when the change may go to the store.
func commit(ctx context.Context) error {
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	if gate, ok := ctx.Value(gateKey{}).(func() bool); ok && !gate() {
		return errs.New(errs.Timeout, "cancelled before it was stored: nothing changed")
	}
	return nil
}

// stopped is the error of a call whose context ended before its commit
// point: nothing was stored.
func stopped(ctx context.Context) error {
	why := "deadline passed"
	if errors.Is(ctx.Err(), context.Canceled) {
		why = "cancelled"
	}
	return errs.Wrap(errs.Timeout, ctx.Err(), "%s before it was stored: nothing changed", why)
}

// stopper is what a frame writer asks before each chunk it codes: a write
// whose context has ended stops coding within a chunk's work.
func stopper(ctx context.Context) func() error {
	if ctx.Done() == nil {
		return nil
	}
	return func() error {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return nil
	}
}
