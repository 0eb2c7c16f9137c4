// Package ucx is the memory node over UCX (build tag ucx; without it, a
// stub that says how to get it): each request is an active message, large
// payloads move by rendezvous straight into the receiver's buffer, and
// ?rma= moves whole frames one-sided (put/get on registered memory). One
// goroutine locked to its OS thread owns each UCX worker; UCX callbacks
// live in a small C shim and only queue events.
package ucx
