// Package metrics is a memory node's Prometheus metrics (`gotensor serve
// --metrics HOST:PORT`): requests by op and status, payload bytes in and
// out, request latency, refused handshakes, and the store's usage.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Node collects one node's metrics; it is the node's serve.Observer.
type Node struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refused  prometheus.Counter
}

// New registers the metrics of a node serving st; held reports the bytes
// being received (the node's budget), nil for none.
func New(st store.Store, held func() int64) *Node {
	n := &Node{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gotensor_requests_total",
			Help: "Requests answered, by op and status (ok or the error kind)."}, []string{"op", "status"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gotensor_received_bytes_total",
			Help: "Payload bytes received in requests, by op."}, []string{"op"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gotensor_sent_bytes_total",
			Help: "Payload bytes sent in successful answers, by op."}, []string{"op"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gotensor_request_seconds",
			Help:    "Time from a request's arrival (payload in hand) to its answer, by op.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 14)}, []string{"op"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "gotensor_handshakes_refused_total",
			Help: "Handshakes refused: a bad hello or token."}),
	}
	usage := func(name, help string, get func(store.Usage) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return float64(get(st.Usage())) })
	}
	n.reg.MustRegister(n.requests, n.bytesIn, n.bytesOut, n.latency, n.refused,
		usage("gotensor_stored_bytes", "Bytes of frames the node holds.", func(u store.Usage) int64 { return u.Bytes }),
		usage("gotensor_keys", "Keys the node holds.", func(u store.Usage) int64 { return u.Keys }),
		usage("gotensor_capacity_bytes", "The node's capacity (0: unbounded).", func(u store.Usage) int64 { return u.Capacity }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if st.Caps().Used != nil { // a store that counts more than its frames against its capacity
		n.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gotensor_used_bytes",
			Help: "Bytes counted against the capacity: the frames' and, per key, its length and a fixed overhead."},
			func() float64 { return float64(store.UsedOf(st)) }))
	}
	if m, ok := st.(interface{ Idle() int64 }); ok { // mem://: replaced frames' memory kept for the next writes
		n.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gotensor_idle_bytes",
			Help: "Bytes of dropped frames' memory kept for reuse (a node keeps up to what its capacity leaves free)."},
			func() float64 { return float64(m.Idle()) }))
	}
	if held != nil {
		n.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gotensor_receiving_bytes",
			Help: "Bytes being received and not yet stored (held by the node's budget)."},
			func() float64 { return float64(held()) }))
	}
	return n
}

// Served counts one answered request.
func (n *Node) Served(op wire.Op, status uint8, in, out int, d time.Duration) {
	name := op.String()
	n.requests.WithLabelValues(name, statusName(status)).Inc()
	if in > 0 {
		n.bytesIn.WithLabelValues(name).Add(float64(in))
	}
	if out > 0 && status == 0 { // an error's text is no data
		n.bytesOut.WithLabelValues(name).Add(float64(out))
	}
	n.latency.WithLabelValues(name).Observe(d.Seconds())
}

// Refused counts one refused handshake.
func (n *Node) Refused() { n.refused.Inc() }

// Handler serves the metrics in the Prometheus text format.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{}))
	return mux
}

// statusName is "ok" or the error kind a response's status byte carries.
func statusName(status uint8) string {
	if status == 0 {
		return "ok"
	}
	return errs.Kind(status - 1).String()
}
