package node

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
)

// A token read from a file (with its newline) opens a node that read the
// same file: given inline as token=open(path).read() does, or named by
// token_file=. A wrong one is still refused.
func TestTokenFromAFileWorksBothEnds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("s3cret-token\n"), 0o600)
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", TokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	schemes.Register()
	for _, u := range []string{n.URL() + "?token=" + url.QueryEscape("s3cret-token\n"), n.URL() + "?token_file=" + url.QueryEscape(file)} {
		c, err := store.Open(u)
		if err != nil {
			t.Fatalf("%s: %v", store.Redact(u), err)
		}
		if err := c.Put(ctx, "k", []byte("x")); err != nil {
			t.Fatalf("%s: %v", store.Redact(u), err)
		}
		c.Close()
	}
	c, err := store.Open(n.URL() + "?token=s3cret-tokeN")
	if err == nil {
		err = c.Put(ctx, "k", []byte("x"))
		c.Close()
	}
	if !errs.Is(err, errs.Unauthorized) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a wrong token: %v", err)
	}
}
