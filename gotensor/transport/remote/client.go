// Package remote is the client side every memory-node transport shares: a
// store.Store (and store.Streamer) over a Link that carries requests to
// one node and brings back their responses.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Link carries requests to one server. Do sends m and waits for its
// response; a response with an error status comes back as that error.
type Link interface {
	Do(ctx context.Context, m *wire.Message) (*wire.Message, error)
	Close()
}

// OneSided is a Link that moves large frames whole and one-sided: streamed
// pieces would bypass that path.
type OneSided interface{ OneSided() bool }

// Options are the URL parameters every transport understands.
type Options struct {
	Token   []byte
	Timeout time.Duration // per request, unless the caller's context ends sooner
}

// ParseOptions checks u's host:port and options (those every URL takes,
// and known), and reads the token (token=, else token_file=, else
// GOTENSOR_TOKEN; taken as the node takes its --token-file, see
// wire.Token) and timeout= (default 60s).
func ParseOptions(u *url.URL, known ...string) (Options, error) {
	if _, _, err := HostPort(u); err != nil {
		return Options{}, err
	}
	if err := store.CheckOptions(u, append(known, "token_file")...); err != nil {
		return Options{}, err
	}
	q := u.Query()
	token := q.Get("token")
	if f := q.Get("token_file"); token == "" && f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return Options{}, errs.Wrap(errs.InvalidArgument, err, "reading the token file named by token_file=")
		}
		token = string(b)
	}
	if token == "" {
		token = os.Getenv("GOTENSOR_TOKEN")
	}
	o := Options{Token: wire.Token(token), Timeout: 60 * time.Second}
	if t := q.Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return o, errs.New(errs.InvalidArgument, "bad timeout %q in store URL", t)
		}
		o.Timeout = d
	}
	return o, nil
}

// HostPort splits a node URL's host:port; a missing or bad port is InvalidArgument.
func HostPort(u *url.URL) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return "", 0, errs.New(errs.InvalidArgument, "store URL %q has no host:port", store.RedactURL(u))
	}
	port, err = strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, errs.New(errs.InvalidArgument, "bad port %q in store URL %q (want 1 to 65535)", p, store.RedactURL(u))
	}
	return host, port, nil
}

// Client is a store.Store on a remote memory node, over any link (TCP or
// UCX). Requests are pipelined; a lost connection fails the requests in
// flight (Unavailable) and the next request connects again.
type Client struct {
	url       string
	link      Link
	uploads   chan struct{} // one slot per streamed write open on the link (wire.MaxUploads)
	streaming keyLocks      // the keys a write streams to: one at a time each
	lent      *pool.Lent    // the frames LendFrame lent and Put has not sent
}

var _ interface {
	store.Store
	store.RangeReader
	store.StreamWriter
	store.Splicer
	store.Lender
	store.RangeRecycler
} = (*Client)(nil)

// New is the store at url over link.
func New(url string, link Link) *Client {
	return &Client{url: url, link: link, uploads: make(chan struct{}, wire.MaxUploads), lent: pool.NewLent(ranges)}
}

// Link is the client's link.
func (c *Client) Link() Link { return c.link }

func (c *Client) URL() string { return c.url }

func (c *Client) do(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	keyed := m.Op != wire.OpList && m.Op != wire.OpPing && m.Op != wire.OpUsage
	if err := store.ValidateKey(m.Key); err != nil && keyed {
		return nil, err
	}
	resp, err := c.link.Do(ctx, m)
	if err != nil && keyed {
		return nil, c.aboutKey(err, m.Key)
	}
	return resp, err
}

// aboutKey is err of a request for key: KeyNotFound names this client's
// URL (not the node's own store), and the error carries the key.
func (c *Client) aboutKey(err error, key string) error {
	var e *errs.Error
	switch {
	case errs.Is(err, errs.KeyNotFound):
		return store.NotFound(key, c.url)
	case errors.As(err, &e) && e.Key == "":
		keyed := *e
		keyed.Key = key
		return &keyed
	}
	return err
}

func (c *Client) Put(ctx context.Context, key string, frame []byte) error {
	_, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPut}, Key: key, Payload: frame})
	if err == nil {
		c.recycleLent(frame) // sent: a refused frame goes back through ReturnFrame
	}
	return err
}

func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	m, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpGet}, Key: key})
	if err != nil {
		return nil, err
	}
	return m.Payload, nil
}

func (c *Client) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	m, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpHead, Arg: uint64(n)}, Key: key})
	if err != nil {
		return nil, 0, err
	}
	return m.Payload, int64(m.Arg), nil
}

func (c *Client) Delete(ctx context.Context, key string) error {
	_, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpDelete}, Key: key})
	return err
}

func (c *Client) Has(ctx context.Context, key string) (bool, error) {
	m, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpHas}, Key: key})
	if err != nil {
		return false, err
	}
	return m.Arg == 1, nil
}

func (c *Client) List(ctx context.Context, prefix string) ([]string, error) {
	m, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpList}, Key: prefix})
	if err != nil {
		return nil, err
	}
	if len(m.Payload) == 0 {
		return nil, nil
	}
	return strings.Split(string(m.Payload), "\n"), nil
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPing}})
	return err
}

func (c *Client) Usage() store.Usage {
	var u store.Usage
	m, err := c.do(context.Background(), &wire.Message{Header: wire.Header{Op: wire.OpUsage}})
	if err != nil { // the node's figures are missing, not zero
		return store.Usage{Unanswered: []string{c.url}}
	}
	json.Unmarshal(m.Payload, &u)
	return u
}

func (c *Client) Close() error {
	c.link.Close()
	return nil
}

// Deadline is when a call begun now must end: after the link's timeout,
// or at the caller's context's deadline when that comes first; within is
// the time that leaves the call, which its Timeout error names.
func Deadline(ctx context.Context, timeout time.Duration) (at time.Time, within time.Duration) {
	now := time.Now()
	at = now.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(at) {
		at = d
	}
	return at, roundTimeout(at.Sub(now))
}

// roundTimeout is d as its caller likely set it, to name in an error: a
// per-call timeout of 300ms has 299.87ms left by the time the link sees it
// on a loaded machine. Three significant digits: 1ms steps from 100ms, 10ms
// from 1s, 100ms from 10s.
func roundTimeout(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// Await waits for the response on ch, the connection's end (dead), the
// call's timer (set for within, see Deadline) or ctx; forget drops the
// pending request when the caller gives up. A response whose Refused is
// set is the call's error (see Calls).
func Await(ctx context.Context, ch chan *wire.Message, dead chan struct{}, timer <-chan time.Time, within time.Duration,
	op wire.Op, addr string, lost func() error, forget func()) (*wire.Message, error) {
	select {
	case resp := <-ch:
		return answer(resp)
	case <-dead:
		select { // the answer that ended the connection is this call's
		case resp := <-ch:
			return answer(resp)
		default:
		}
		return nil, lost()
	case <-timer:
		forget()
		return nil, errs.New(errs.Timeout, "%s: no answer from %s within %v", op, addr, within)
	case <-ctx.Done():
		forget()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) { // the call's own deadline: as the timer would say
			return nil, errs.Wrap(errs.Timeout, ctx.Err(), "%s: no answer from %s within %v", op, addr, within)
		}
		return nil, CtxErr(ctx, op, addr)
	}
}

func answer(resp *wire.Message) (*wire.Message, error) {
	if resp.Refused != nil {
		return nil, resp.Refused
	}
	if resp.Status != 0 {
		return nil, wire.StatusErr(resp.Status, resp.Payload)
	}
	return resp, nil
}

// CtxErr is the error for a call whose context ended.
func CtxErr(ctx context.Context, op wire.Op, addr string) error {
	return errs.Wrap(errs.Timeout, ctx.Err(), "%s on %s", op, addr)
}

// Lost is the error for requests on a connection that ended with err.
func Lost(err error, addr string) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return errs.Wrap(errs.Unavailable, err, "connection to gotensor server %s lost", addr)
}
