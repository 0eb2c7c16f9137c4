package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/valkey-io/valkey-go"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// wrap types err, from a call about key ("" none) doing what: the
// server's refusals by their code (OOM: StoreFull; NOAUTH, WRONGPASS,
// NOPERM: Unauthorized; CLUSTERDOWN, LOADING, READONLY, MASTERDOWN,
// TRYAGAIN: Unavailable), a missing value KeyNotFound, a deadline
// Timeout, anything on the way (a refused or lost connection) Unavailable.
// No message carries the password.
func (s *Store) wrap(ctx context.Context, err error, key, what string) error {
	if err == nil {
		return nil
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if valkey.IsValkeyNil(err) && key != "" {
		return store.NotFound(key, s.url)
	}
	kind := errs.Unavailable
	text := s.scrub(err.Error())
	if ve, ok := valkey.IsValkeyErr(err); ok {
		code, _, _ := strings.Cut(ve.Error(), " ")
		switch code {
		case "OOM":
			kind = errs.StoreFull
		case "NOAUTH", "WRONGPASS", "NOPERM":
			kind = errs.Unauthorized
		case "CLUSTERDOWN", "LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "MOVED", "ASK", "BUSY", "NOREPLICAS":
			kind = errs.Unavailable
		case "WRONGTYPE":
			kind = errs.CorruptData
		default:
			kind = errs.Internal
			if strings.Contains(ve.Error(), "gotensor") { // our scripts' own refusals
				kind = errs.InvalidArgument
			}
		}
	} else {
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, syscall.ETIMEDOUT) || isTimeout(err):
			kind = errs.Timeout
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				kind = errs.Timeout
			}
		case errors.Is(err, valkey.ErrClosing) && s.closed.Load():
			kind = errs.Closed
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
			errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, valkey.ErrClosing):
			kind = errs.Unavailable
		}
		if strings.Contains(text, "WRONGPASS") || strings.Contains(text, "NOAUTH") || strings.Contains(text, "NOPERM") {
			kind = errs.Unauthorized
		}
	}
	if kind == errs.Timeout && ctx.Err() == nil && !isTimeout(err) {
		kind = errs.Unavailable
	}
	msg := what + " " + s.url
	if key != "" {
		return &errs.Error{Kind: kind, Msg: "key " + quote(key) + ": " + msg + ": " + text, Key: key}
	}
	return &errs.Error{Kind: kind, Msg: msg + ": " + text}
}

func quote(key string) string { return strconv.Quote(key) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// scrub hides the password in text, should any layer below have put it there.
func (s *Store) scrub(text string) string {
	if s.password != "" && strings.Contains(text, s.password) {
		text = strings.ReplaceAll(text, s.password, "xxxxx")
	}
	return text
}
