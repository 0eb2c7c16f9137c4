//go:build ucx

package ucx

import "github.com/gotensor/gotensor/gotensor/transport/remote"

// SendToPeers sends an active message as it is from s to each of its
// peers: a node's answer that no request asked for.
func SendToPeers(s *Server, amID uint, hdr, payload []byte) {
	s.w.call(func() {
		for ep := range s.peers {
			s.w.send(ep, amID, hdr, payload, nil)
		}
	})
}

// SetMemTotal makes c's link take this machine's memory to be n bytes
// until restore is called.
func SetMemTotal(c *remote.Client, n uint64) (restore func()) {
	l := c.Link().(*ucxLink)
	var old func() uint64
	l.w.call(func() { old, memTotal = memTotal, func() uint64 { return n } })
	return func() { l.w.call(func() { memTotal = old }) }
}
