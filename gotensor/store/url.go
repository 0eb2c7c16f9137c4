package store

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// CommonOptions are the options every store URL may carry: timeout= (the
// deadline of each call) and token= (a node's shared secret; local stores
// need none and ignore it, so the same call opens any URL).
var CommonOptions = []string{"timeout", "token"}

// CheckOptions refuses a URL option that is neither one of known nor
// common: a misspelt option (capcity=) would otherwise be ignored.
func CheckOptions(u *url.URL, known ...string) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return errs.New(errs.InvalidArgument, "bad options in store URL %q", RedactURL(u))
	}
	for k := range q {
		if !slices.Contains(known, k) && !slices.Contains(CommonOptions, k) {
			names := append(slices.Clone(known), CommonOptions...)
			sort.Strings(names)
			return errs.New(errs.InvalidArgument, "unknown option %q in store URL %q (%s:// knows %s)",
				k, RedactURL(u), u.Scheme, strings.Join(names, ", "))
		}
	}
	return nil
}

// Redact is a store URL fit for a message: the value of token= hidden.
func Redact(rawURL string) string {
	base, q, ok := strings.Cut(rawURL, "?")
	if !ok {
		return rawURL
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, _, _ := strings.Cut(p, "="); k == "token" {
			parts[i] = "token=xxxxx"
		}
	}
	return base + "?" + strings.Join(parts, "&")
}

// RedactURL is Redact of u (its userinfo password hidden too).
func RedactURL(u *url.URL) string { return Redact(u.Redacted()) }
