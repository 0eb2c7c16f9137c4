package serve

import (
	"sync"
	"time"
)

// LogLimiter writes at most one line per interval, for lines a peer can
// cause at will; the next line written after some were dropped says how
// many.
type LogLimiter struct {
	logf    func(format string, args ...any)
	every   time.Duration
	now     func() time.Time
	mu      sync.Mutex
	last    time.Time // when the last line was written (zero: none yet)
	dropped int       // lines dropped since
}

// NewLogLimiter writes to logf at most once per every; now is the clock.
func NewLogLimiter(logf func(format string, args ...any), every time.Duration, now func() time.Time) *LogLimiter {
	return &LogLimiter{logf: logf, every: every, now: now}
}

// Printf writes the line, or drops it within every of the last one written.
func (l *LogLimiter) Printf(format string, args ...any) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.dropped++
		l.mu.Unlock()
		return
	}
	dropped, since := l.dropped, now.Sub(l.last)
	l.last, l.dropped = now, 0
	l.mu.Unlock()
	if dropped > 0 {
		format += " (%d more not logged in the last %v)"
		args = append(args[:len(args):len(args)], dropped, since.Round(time.Millisecond))
	}
	l.logf(format, args...)
}
