// Package otlpencodingextension is an empty stand-in; see ../README.md.
package otlpencodingextension
