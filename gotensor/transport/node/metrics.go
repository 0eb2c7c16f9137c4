package node

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/metrics"
)

// serveMetrics serves the node's Prometheus metrics on addr in the
// background; the collector it returns observes the node's requests.
func (n *Node) serveMetrics(addr string, logf func(string, ...any)) (*metrics.Node, error) {
	m := metrics.New(n.store, n.budget.Held)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen for metrics on %s", addr)
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && logf != nil {
			logf("gotensor serve: metrics: %v", err)
		}
	}()
	n.metricsAddr = ln.Addr().String()
	n.stopMetrics = func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return m, nil
}
