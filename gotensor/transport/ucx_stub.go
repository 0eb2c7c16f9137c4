//go:build !ucx

package transport

import (
	"net/url"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// UCXBuilt reports whether this build carries the UCX transport.
const UCXBuilt = false

func init() {
	store.RegisterScheme("ucx", func(u *url.URL) (store.Store, error) { return nil, errNoUCX() })
}

func errNoUCX() error {
	return errs.New(errs.Unsupported, "this gotensor was built without UCX: install libucx-dev (UCX >= 1.13) and rebuild (`make install` detects it)")
}

type ucxConfig struct{}

func ucxConfigFor(tls, addr string) ucxConfig { return ucxConfig{} }

// UCXServer is not available in this build.
type UCXServer struct{}

func ListenUCX(addr string, cfg ServerConfig, u ucxConfig) (*UCXServer, error) {
	return nil, errNoUCX()
}
func (s *UCXServer) Addr() string { return "" }
func (s *UCXServer) Close() error { return nil }
