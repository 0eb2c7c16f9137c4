package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestMessageIsErrorWithoutTheKind(t *testing.T) {
	cause := errors.New("disk on fire")
	for _, c := range []struct {
		err        error
		kind       Kind
		key, error string
		message    string
	}{
		{New(StoreFull, "mem:// is full"), StoreFull, "", "StoreFull: mem:// is full", "mem:// is full"},
		{ForKey(KeyNotFound, "k", "key %q not found", "k"), KeyNotFound, "k", `KeyNotFound: key "k" not found`, `key "k" not found`},
		{WrapKey(Unavailable, "k", cause, "writing key %q", "k"), Unavailable, "k", `Unavailable: writing key "k": disk on fire`, `writing key "k": disk on fire`},
		{fmt.Errorf("opening: %w", New(Timeout, "late")), Timeout, "", "opening: Timeout: late", "opening: Timeout: late"},
		{cause, Internal, "", "disk on fire", "disk on fire"},
	} {
		if c.err.Error() != c.error || Message(c.err) != c.message || KindOf(c.err) != c.kind || KeyOf(c.err) != c.key {
			t.Errorf("%q: message %q, kind %v, key %q", c.err, Message(c.err), KindOf(c.err), KeyOf(c.err))
		}
	}
}
