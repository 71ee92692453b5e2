// Package preauthextension implements the preauth extension: a gRPC server middleware that
// checks each incoming stream's headers with a server authenticator (bearertokenauth, ...)
// before the server reads the request body, bounds how long a new connection may take over
// its TLS and HTTP/2 handshake, and bounds the requests each gRPC or HTTP listener has in
// flight (README.md).
package preauthextension // import "github.com/gpumem/otelcol-gpumem/extension/preauthextension"
