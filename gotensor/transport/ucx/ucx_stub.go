//go:build !ucx

package ucx

import (
	"net/url"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
)

// Built reports whether this build carries the UCX transport.
const Built = false

// Register makes store.Open answer ucx:// with the reason it cannot.
func Register() {
	store.RegisterScheme("ucx", func(u *url.URL) (store.Store, error) { return nil, errNoUCX() })
}

func errNoUCX() error {
	return errs.New(errs.Unsupported, "this gotensor was built without UCX (the wheel leaves it out): build it from source where UCX is installed: apt install libucx-dev (UCX >= 1.13), then pip install --no-binary gotensor gotensor, or make install in a checkout")
}

// Config chooses UCX transports (nothing to choose in this build).
type Config struct{}

// ConfigFor is the configuration for a worker serving or reaching addr.
func ConfigFor(tls, addr string) Config { return Config{} }

// Server is not available in this build.
type Server struct{}

// Listen reports that this build has no UCX.
func Listen(addr string, cfg serve.Config, u Config) (*Server, error) {
	return nil, errNoUCX()
}
func (s *Server) Addr() string { return "" }
func (s *Server) Close() error { return nil }
