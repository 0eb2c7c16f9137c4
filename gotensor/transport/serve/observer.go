package serve

import (
	"context"
	"time"

	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Observer sees what a node serves (its metrics). Implementations are safe
// for concurrent use and return quickly: they run on the serving path.
type Observer interface {
	// Served reports one answered request: its op, the answer's status
	// (0: ok), the payload bytes received and sent, and the time from the
	// request's arrival (payload in hand) to its answer.
	Served(op wire.Op, status uint8, in, out int, d time.Duration)
	// Refused reports a handshake the node refused (bad hello or token).
	Refused()
}

type noObserver struct{}

func (noObserver) Served(wire.Op, uint8, int, int, time.Duration) {}
func (noObserver) Refused()                                       {}

// Serve is Handle on cfg's store, reported to cfg's observer.
func (cfg Config) Serve(ctx context.Context, m *wire.Message) *wire.Message {
	start, in := time.Now(), len(m.Payload)
	resp := Handle(ctx, cfg.Store, m)
	cfg.Observer.Served(m.Op, resp.Status, in, len(resp.Payload), time.Since(start))
	return resp
}

// Observe reports resp, the answer to a request of op with in payload
// bytes begun at start, when it was not answered by Serve.
func (cfg Config) Observe(op wire.Op, in int, resp *wire.Message, start time.Time) {
	cfg.Observer.Served(op, resp.Status, in, len(resp.Payload), time.Since(start))
}
