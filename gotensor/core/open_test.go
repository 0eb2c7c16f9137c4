package core

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// core.Open knows the memory-node schemes without any other import:
// nothing listens on port 1, so both fail to connect (or, ucx:// in a
// build without UCX, say so), never "unknown scheme".
func TestOpenKnowsNodeSchemes(t *testing.T) {
	for _, u := range []string{"tcp://127.0.0.1:1", "ucx://127.0.0.1:1"} {
		_, err := Open(u)
		if err == nil || errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%s: %v", u, err)
		}
	}
}
