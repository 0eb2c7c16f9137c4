//go:build tools

// Package tools pins the build-time generators: gopy v0.4.10 needs a newer
// golang.org/x/tools than it declares to run on current Go releases.
package tools

import (
	_ "github.com/go-python/gopy"
	_ "golang.org/x/tools/cmd/goimports"
)
