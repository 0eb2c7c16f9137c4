// Package errs defines the typed errors every gotensor layer returns. An
// error crosses to Python as fields (KindOf, KeyOf, Message) and to C as a
// numeric code beside its text, so no caller has to parse a message.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error so callers can react to it without parsing text.
type Kind uint8

const (
	Internal Kind = iota
	InvalidArgument
	KeyNotFound
	CorruptData
	StoreFull
	Closed
	Unavailable
	Unauthorized
	Timeout
	Unsupported
)

var kindNames = [...]string{
	Internal:        "Internal",
	InvalidArgument: "InvalidArgument",
	KeyNotFound:     "KeyNotFound",
	CorruptData:     "CorruptData",
	StoreFull:       "StoreFull",
	Closed:          "Closed",
	Unavailable:     "Unavailable",
	Unauthorized:    "Unauthorized",
	Timeout:         "Timeout",
	Unsupported:     "Unsupported",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kinds lists every kind, in code order.
func Kinds() []Kind {
	out := make([]Kind, len(kindNames))
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// Error is a classified error with a message meant for the user.
type Error struct {
	Kind Kind
	Msg  string
	Err  error  // optional cause
	Key  string // the key the error is about ("": none); Python's exception has it as .key
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Kind.String() + ": " + e.Msg + ": " + e.Err.Error()
	}
	return e.Kind.String() + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error of kind k with a formatted message.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Wrap classifies cause as kind k, with a message giving context.
func Wrap(k Kind, cause error, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// ForKey returns an error of kind k about key (KeyOf reports it).
func ForKey(k Kind, key, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Key: key}
}

// WrapKey is Wrap for an error about key.
func WrapKey(k Kind, key string, cause error, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: cause, Key: key}
}

// Message is err's text without the "Kind: " that Error puts first: what
// an exception whose class names the kind says.
func Message(err error) string {
	if e, ok := err.(*Error); ok {
		if e.Err != nil {
			return e.Msg + ": " + e.Err.Error()
		}
		return e.Msg
	}
	return err.Error()
}

// KeyOf reports the key err is about, "" if none.
func KeyOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Key
	}
	return ""
}

// KindOf reports the kind of err; unclassified errors are Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err has kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Recover turns a panic into an Internal error stored in *errp. Use it as
// `defer errs.Recover(&err)` in every function reachable from Python or C.
func Recover(errp *error) {
	if r := recover(); r != nil {
		*errp = &Error{Kind: Internal, Msg: fmt.Sprintf("panic: %v", r)}
	}
}
