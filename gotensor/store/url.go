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

// shownOptions are the options whose values a message may show; any
// other option's value, a misspelt token= among them, is hidden.
var shownOptions = []string{"capacity", "fsync", "timeout", "tls", "ca", "rma", "transports", "replicas", "pieces", "token_file", "piece", "password_file", "servername"}

// CheckOptions refuses a URL option that is neither one of known nor
// common (a misspelt option, capcity=, would otherwise be ignored), and an
// option given twice.
func CheckOptions(u *url.URL, known ...string) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return errs.New(errs.InvalidArgument, "bad options in store URL %q", RedactURL(u))
	}
	names := append(slices.Clone(known), CommonOptions...)
	sort.Strings(names)
	for k, vs := range q {
		if !slices.Contains(names, k) {
			return errs.New(errs.InvalidArgument, "unknown option %s in store URL %q (%s:// knows %s)",
				optionName(k), RedactURL(u), u.Scheme, strings.Join(names, ", "))
		}
		if len(vs) > 1 {
			return errs.New(errs.InvalidArgument, "option %s given %d times in store URL %q", optionName(k), len(vs), RedactURL(u))
		}
	}
	return nil
}

// optionName is an option's name fit for a message: quoted where it looks
// like a name, else not shown (a value pasted where a name belongs).
func optionName(k string) string {
	if len(k) == 0 || len(k) > 32 {
		return "(a name not shown)"
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return "(a name not shown)"
		}
	}
	return `"` + k + `"`
}

// Redact is a store URL fit for a message: only the values of options
// known to be safe are shown (token= and any option this code does not
// know, such as a misspelt tokn=, read xxxxx).
func Redact(rawURL string) string {
	rawURL = hidePassword(rawURL)
	base, q, ok := strings.Cut(rawURL, "?")
	if !ok {
		return rawURL
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		switch {
		case slices.Contains(shownOptions, k):
		case optionName(k) == `"`+k+`"`:
			parts[i] = k + "=xxxxx"
		default:
			parts[i] = "xxxxx"
		}
	}
	return base + "?" + strings.Join(parts, "&")
}

// RedactURL is Redact of u (its userinfo password hidden too).
func RedactURL(u *url.URL) string { return Redact(u.Redacted()) }

// hidePassword hides the password of a URL's userinfo
// (scheme://user:password@host reads scheme://user:xxxxx@host), parsed
// by hand: a URL url.Parse refuses (several hosts) may carry one too.
func hidePassword(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return rawURL
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return rawURL
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
