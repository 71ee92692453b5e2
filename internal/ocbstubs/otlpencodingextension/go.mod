// Stand-in: see ../README.md. Never linked into the distribution.
module github.com/open-telemetry/opentelemetry-collector-contrib/extension/encoding/otlpencodingextension

go 1.25
