package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"unsafe"

	"github.com/valkey-io/valkey-go"
)

// stringConn is a connection with a WriteString that writes the string in
// place: valkey-go's buffered writer hands a string larger than its free
// space straight to the connection's WriteString where there is one,
// rather than copying it through its buffer, so that a piece (megabytes)
// goes from the frame to the socket with no copy of the client's own.
type stringConn struct{ net.Conn }

func (c stringConn) WriteString(s string) (int, error) {
	return c.Conn.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// dial connects as valkey-go does (TLS where cfg is set), as a stringConn.
func dial(ctx context.Context, dst string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", dst)
	} else {
		c, err = d.DialContext(ctx, "tcp", dst)
	}
	if err != nil {
		return nil, err
	}
	return stringConn{c}, nil
}

// into receives a streamed reply straight into d: valkey-go copies a
// stream to a writer through its ReadFrom, and the reader it passes reads
// a large part straight from the socket when its buffer is empty.
type into struct {
	d []byte
	n int
}

func (w *into) Write(p []byte) (int, error) {
	if len(p) > len(w.d)-w.n {
		return 0, errLongPiece
	}
	w.n += copy(w.d[w.n:], p)
	return len(p), nil
}

func (w *into) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if w.n == len(w.d) { // full: anything more is a longer piece than the manifest says
			var b [1]byte
			if n, _ := r.Read(b[:]); n > 0 {
				// counted: valkey-go discards the rest of the reply by what
				// was read, keeping the connection in step
				return total + int64(n), errLongPiece
			}
			return total, nil
		}
		n, err := r.Read(w.d[w.n:])
		w.n += n
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

var errLongPiece = errors.New("a piece is longer than its manifest says")

// streamPiece reads what cmd asks of a piece (all of it, or a range) into
// d over a connection of its own (valkey-go's DoStream), with no copy of
// the client's own: it returns ok=false, having read nothing usable, where
// the caller should read it the usual way (a redirect during a failover,
// which a stream does not follow, or a reply of another length than d's),
// errPieceGone for a missing piece, or another error.
func (s *Store) streamPiece(ctx context.Context, cmd valkey.Completed, d []byte) (ok bool, err error) {
	st := s.c.DoStream(ctx, cmd)
	w := &into{d: d}
	_, err = st.WriteTo(w)
	switch {
	case valkey.IsValkeyNil(err):
		return true, errPieceGone
	case err == nil && w.n == len(d):
		return true, nil
	case err == nil && w.n == 0 && len(d) > 0:
		return true, errPieceGone // an empty value: nothing is stored empty
	default:
		return false, nil
	}
}
