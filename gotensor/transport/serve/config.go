package serve

import (
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Config configures a memory node's server.
type Config struct {
	Store       store.Store // where frames live (mem:// with a capacity, or a directory)
	Token       []byte      // shared secret; nil serves without authentication
	Budget      *Budget     // bytes being received; default: the store's capacity, for this server alone
	MaxMessage  uint64      // largest payload accepted (default wire.DefaultMaxMessage)
	MaxInflight int         // requests served at once per connection (default 64)
	// PayloadIdle is the longest a payload being received may go without a
	// byte: the connection is then closed and what the payload held of the
	// budget given back (default DefaultPayloadIdle; negative: no limit).
	PayloadIdle time.Duration
	// UploadIdle is the longest a streamed upload may wait for its next
	// part or its commit: it is then dropped, its parts' budget given back,
	// and its later parts and commit fail with Timeout (default
	// DefaultUploadIdle; negative: no limit).
	UploadIdle time.Duration
	Logf       func(format string, args ...any)
	Observer   Observer // sees every request and refused handshake (default: none)

	refusals *LogLimiter // logs refused handshakes, at most one line per RefusedLogEvery
}

// Defaults of Config's idle limits: a client sends a payload's bytes
// back to back and a streamed frame's parts as fast as it encodes them,
// so silence this long is a stalled or vanished peer holding the budget.
const (
	DefaultPayloadIdle = 30 * time.Second
	DefaultUploadIdle  = 60 * time.Second
)

// RefusedLogEvery is how often a server logs a refused handshake at most:
// peers that need no token to be refused must not be able to flood the log.
const RefusedLogEvery = time.Second

// WithDefaults fills in what cfg leaves zero.
func (cfg Config) WithDefaults() Config {
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = wire.DefaultMaxMessage
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = 64
	}
	if cfg.PayloadIdle == 0 {
		cfg.PayloadIdle = DefaultPayloadIdle
	}
	if cfg.UploadIdle == 0 {
		cfg.UploadIdle = DefaultUploadIdle
	}
	if cfg.Budget == nil {
		cfg.Budget = NewBudget(cfg.Store.Usage().Capacity, cfg.Store)
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.refusals == nil {
		cfg.refusals = NewLogLimiter(cfg.Logf, RefusedLogEvery, time.Now)
	}
	return cfg
}

// LogRefused logs a refused handshake (or anything else a peer that has
// not authenticated makes the server say), rate-limited.
func (cfg Config) LogRefused(format string, args ...any) {
	switch {
	case cfg.refusals != nil:
		cfg.refusals.Printf(format, args...)
	case cfg.Logf != nil: // a Config without its defaults
		cfg.Logf(format, args...)
	}
}
