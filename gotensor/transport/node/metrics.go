package node

import (
	"github.com/gotensor/gotensor/gotensor/transport/metrics"
)

// serveMetrics serves the node's Prometheus metrics at /metrics (see
// serveHTTP); the collector it returns observes the node's requests.
func (n *Node) serveMetrics(addr string, authenticate bool, web webConfig) (*metrics.Node, error) {
	m := metrics.New(n.store, n.budget.Held)
	e, err := serveHTTP("metrics", addr, m.Handler(), authenticate, web)
	if err != nil {
		return nil, err
	}
	n.metrics = e
	return m, nil
}
