//go:build !amd64

package codec

func huffRounds4(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	huffRounds4Go(hot, tb, src, dst, k)
}
