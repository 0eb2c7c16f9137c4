// Package schemes registers the remote URL schemes (tcp://, ucx://, redis:// and its kin)
// with store.Open; whatever opens stores by URL calls Register first.
package schemes

import (
	"sync"

	"github.com/gotensor/gotensor/gotensor/transport/redis"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

var once sync.Once

// Register makes store.Open understand tcp://, ucx://, redis://, rediss://, valkey:// and valkeys://; calling it again does nothing.
func Register() {
	once.Do(func() {
		tcp.Register()
		ucx.Register()
		redis.Register()
	})
}
