//go:build ucx

package ucx

import "github.com/gotensor/gotensor/gotensor/transport/remote"

// Peers counts the server's endpoints.
func Peers(s *Server) (n int) {
	s.w.call(func() { n = len(s.peers) })
	return n
}

// SendRaw sends an active message as it is on c's endpoint.
func SendRaw(c *remote.Client, amID uint, hdr, payload []byte) {
	l := c.Link().(*ucxLink)
	l.w.call(func() { l.w.send(l.conn.ep, amID, hdr, payload, nil) })
}
