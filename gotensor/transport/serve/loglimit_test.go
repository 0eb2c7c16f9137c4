package serve

import (
	"fmt"
	"testing"
	"time"
)

// At most one line per interval; the next line written says how many
// were dropped.
func TestLogLimiter(t *testing.T) {
	var got []string
	now := time.Unix(1000, 0)
	l := NewLogLimiter(func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) },
		time.Second, func() time.Time { return now })
	for i := range 5 {
		l.Printf("refused %d", i)
		now = now.Add(100 * time.Millisecond)
	}
	now = now.Add(600 * time.Millisecond) // 1.1 s after the first
	l.Printf("refused %d", 5)
	now = now.Add(2 * time.Second)
	l.Printf("refused %d", 6)
	want := []string{
		"refused 0",
		"refused 5 (4 more not logged in the last 1.1s)",
		"refused 6",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("logged %q, want %q", got, want)
	}
}
