// Package authretryextension implements the auth_retry extension: a gRPC client middleware
// that turns a server's refusal of the exporter's credentials (Unauthenticated, and by default
// PermissionDenied) into Unavailable, so that exporterhelper retries the batch and its sending
// queue keeps it until the server accepts the credentials again, instead of dropping it as a
// permanent error (README.md).
package authretryextension // import "github.com/gpumem/otelcol-gpumem/extension/authretryextension"
