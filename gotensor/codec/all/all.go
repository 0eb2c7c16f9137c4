// Package all registers every codec family with package codec: import it
// (for its side effect) wherever frames are written or read.
package all

import (
	_ "github.com/gotensor/gotensor/gotensor/codec/deflate"
	_ "github.com/gotensor/gotensor/gotensor/codec/lz"
	_ "github.com/gotensor/gotensor/gotensor/codec/planes"
	_ "github.com/gotensor/gotensor/gotensor/codec/quant"
)
