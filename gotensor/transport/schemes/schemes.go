// Package schemes registers the memory-node URL schemes (tcp://, ucx://)
// with store.Open; whatever opens stores by URL calls Register first.
package schemes

import (
	"sync"

	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

var once sync.Once

// Register makes store.Open understand tcp:// and ucx://; calling it again does nothing.
func Register() {
	once.Do(func() {
		tcp.Register()
		ucx.Register()
	})
}
