package transport

import (
	"net"
	"os"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// ServeOptions are `gotensor serve`'s flags.
type ServeOptions struct {
	Listen    string // host:port, loopback unless a token is set
	Capacity  int64  // bytes; 0 unbounded
	Dir       string // persist frames here (survives restarts); "" keeps them in memory
	TokenFile string // file holding the shared secret
	Logf      func(format string, args ...any)
}

// Start opens the backing store, listens and serves in the background.
func Start(o ServeOptions) (*Server, error) {
	var token []byte
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return nil, errs.Wrap(errs.InvalidArgument, err, "reading token file")
		}
		token = []byte(strings.TrimSpace(string(b)))
		if len(token) == 0 {
			return nil, errs.New(errs.InvalidArgument, "token file %s is empty", o.TokenFile)
		}
	}
	if err := CheckListenAddr(o.Listen, token); err != nil {
		return nil, err
	}
	var st store.Store
	if o.Dir != "" {
		d, err := store.OpenDir(o.Dir, o.Capacity)
		if err != nil {
			return nil, err
		}
		st = d
	} else {
		st = store.NewMem("mem://serve", o.Capacity)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		st.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen on %s", o.Listen)
	}
	s := NewServer(ServerConfig{Store: st, Token: token, Logf: o.Logf})
	s.ln = ln // Addr works at once
	go s.Serve(ln)
	return s, nil
}

// Shutdown closes the server and its store.
func (s *Server) Shutdown() error {
	s.Close()
	return s.cfg.Store.Close()
}
