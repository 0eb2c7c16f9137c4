package serve

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Handle serves one request from st; a panic in the store becomes the
// request's Internal error. The sender calls resp.Done once resp is sent.
func Handle(ctx context.Context, st store.Store, m *wire.Message) (resp *wire.Message) {
	defer Recover(m, &resp)
	if m.Refused != nil {
		return wire.Fail(m, m.Refused)
	}
	resp = wire.Reply(m)
	fail := func(err error) *wire.Message { return wire.Fail(m, err) }
	switch m.Op {
	case wire.OpPing:
	case wire.OpPut:
		if err := st.Put(ctx, m.Key, m.Payload); err != nil {
			if m.Lent != nil {
				m.Lent(m.Payload)
			}
			return fail(err)
		}
	case wire.OpGet:
		b, release, err := Frame(ctx, st, m.Key)
		if err != nil {
			return fail(err)
		}
		resp.Payload, resp.Release = b, release
	case wire.OpHead:
		b, size, err := st.Head(ctx, m.Key, int(min(m.Arg, 1<<20)))
		if err != nil {
			return fail(err)
		}
		resp.Payload, resp.Arg = b, uint64(size)
	case wire.OpDelete:
		if err := st.Delete(ctx, m.Key); err != nil {
			return fail(err)
		}
	case wire.OpHas:
		ok, err := st.Has(ctx, m.Key)
		if err != nil {
			return fail(err)
		}
		if ok {
			resp.Arg = 1
		}
	case wire.OpList:
		ks, err := st.List(ctx, m.Key)
		if err != nil {
			return fail(err)
		}
		resp.Payload = []byte(strings.Join(ks, "\n"))
	case wire.OpUsage:
		resp.Payload, _ = json.Marshal(st.Usage())
	case wire.OpGetRange:
		if len(m.Payload) != 8 {
			return fail(wire.Protocol("get-range wants an 8-byte length"))
		}
		b, size, release, err := store.LeaseRange(ctx, st, m.Key, int64(m.Arg), int64(binary.LittleEndian.Uint64(m.Payload)))
		if err != nil {
			return fail(err)
		}
		resp.Payload, resp.Arg, resp.Release = b, uint64(size), release
	case wire.OpSplice:
		old, header, n, data, err := wire.ParseSplice(m.Payload)
		if err != nil {
			return fail(err)
		}
		done, err := store.SpliceOn(ctx, st, m.Key, old, header, int64(m.Arg), n, data)
		if err != nil {
			return fail(err)
		}
		if done {
			resp.Arg = 1
		}
	default: // one-sided ops need a transport with remote memory access
		return fail(errs.New(errs.Unsupported, "%s is not served over this transport", m.Op))
	}
	return resp
}

// Frame is the frame under key, to be sent: leased where st leases (the
// frame stays the store's, which may reuse its memory once release is
// called), else st's copy (release does nothing). Call release once, after.
func Frame(ctx context.Context, st store.Store, key string) (b []byte, release func(), err error) {
	if l := st.Caps().Leaser; l != nil {
		return l.Lease(ctx, key)
	}
	b, err = st.Get(ctx, key)
	return b, func() {}, err
}

// Recover, deferred, turns a panic while serving m into m's Internal error.
func Recover(m *wire.Message, resp **wire.Message) {
	if r := recover(); r != nil {
		*resp = wire.Fail(m, errs.New(errs.Internal, "panic serving %s %q: %v", m.Op, m.Key, r))
	}
}
