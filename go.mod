module github.com/gotensor/gotensor

go 1.26.0

require github.com/go-python/gopy v0.4.10

require (
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	golang.org/x/sys v0.50.0
)

require (
	github.com/NVIDIA/go-nvml v0.13.4-1
	github.com/google/uuid v1.6.0 // indirect
)
