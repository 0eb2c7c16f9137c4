package deflate

// The codecs shuffle-deflate's and deflate's tests measure them against.
import (
	_ "github.com/gotensor/gotensor/gotensor/codec/lz"
	_ "github.com/gotensor/gotensor/gotensor/codec/planes"
)
