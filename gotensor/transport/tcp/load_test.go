package tcp_test

import (
	"net/url"
	"testing"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/internal/transporttest"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
)

func TestLoadTCP(t *testing.T) {
	_, addr := startServer(t, "tok", 0)
	transporttest.RunLoad(t, func() (store.Store, error) {
		u, _ := url.Parse("tcp://" + addr + "?token=tok")
		return tcp.Open(u)
	}, 8)
}
