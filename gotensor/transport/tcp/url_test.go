package tcp_test

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
)

// Unknown options, a missing or bad port are InvalidArgument (they were
// ignored, or Unavailable after a dial), and no error echoes the token.
func TestURLChecked(t *testing.T) {
	tcp.Register()
	_, addr := startServer(t, "", 0)
	for _, u := range []string{"tcp://" + addr + "?capcity=1&token=SEKRIT", "tcp://127.0.0.1?token=SEKRIT",
		"tcp://127.0.0.1:99999?token=SEKRIT", "tcp://127.0.0.1:http?token=SEKRIT", "tcp://:7707?token=SEKRIT",
		"tcp://" + addr + "," + addr + "1?tsl=1&token=SEKRIT"} {
		s, err := store.Open(u)
		if !errs.Is(err, errs.InvalidArgument) || strings.Contains(err.Error(), "SEKRIT") {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open(%q) = %v; want InvalidArgument without the token", u, err)
		}
	}
	if _, err := store.Open("tcp://" + addr + "?tsl=1"); err == nil || !strings.Contains(err.Error(), "servername, timeout, tls, token") {
		t.Errorf("unknown option: %v; want the known ones named", err)
	}
}

// A node's KeyNotFound names the URL the client opened, not the node's
// own store, and carries the key.
func TestKeyNotFoundNamesClientURL(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	_, err := c.Get(ctx, "no such key")
	if !errs.Is(err, errs.KeyNotFound) || !strings.Contains(err.Error(), "tcp://"+addr) || strings.Contains(err.Error(), "mem://node") {
		t.Fatalf("get: %v", err)
	}
	if errs.KeyOf(err) != "no such key" {
		t.Fatalf("key %q", errs.KeyOf(err))
	}
}

// A listener that never answers the hello (a ucx node) is named within a
// second; the client used to wait 10 s for an i/o timeout.
func TestSilentPeerNamedQuickly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	u, _ := url.Parse("tcp://" + ln.Addr().String() + "?timeout=30s")
	_, err = tcp.Open(u)
	if took := time.Since(start); !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "ucx://") || took > 1500*time.Millisecond {
		t.Fatalf("%v after %v", err, took)
	}
}
