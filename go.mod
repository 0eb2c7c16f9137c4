module github.com/gotensor/gotensor

go 1.26.0

require github.com/go-python/gopy v0.4.10

require golang.org/x/sys v0.50.0
