package serve

import (
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
	Logf        func(format string, args ...any)
	Observer    Observer // sees every request and refused handshake (default: none)
}

// WithDefaults fills in what cfg leaves zero.
func (cfg Config) WithDefaults() Config {
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = wire.DefaultMaxMessage
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = 64
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
	return cfg
}
