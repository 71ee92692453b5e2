// Package preauthextension implements the preauth extension: a gRPC server middleware that
// checks each incoming stream's headers with a server authenticator (bearertokenauth, ...)
// before the server reads the request body, and bounds how long a new connection may take
// over its TLS and HTTP/2 handshake (README.md).
package preauthextension // import "github.com/gpumem/otelcol-gpumem/extension/preauthextension"
