# syntax=docker/dockerfile:1
#
# The otelcol-gpumem image:
#   docker build -t ghcr.io/gpumem/otelcol-gpumem:0.1.0 .
#   docker run --rm --gpus all ghcr.io/gpumem/otelcol-gpumem:0.1.0 --config=/path/to/config.yaml
# Kubernetes manifests and Helm values using it: deploy/.

# Build stage. go-nvml loads libnvidia-ml through cgo, so cgo stays on (the Makefile exports
# CGO_ENABLED=1). Built on the same Debian release as the runtime stage so the binary asks for
# no newer glibc than the runtime has.
FROM golang:1.26-bookworm AS build
WORKDIR /src
# The binary carries its version from builder-config.yaml; VCS stamping would only add a
# dependency on .git being in the build context.
ENV GOFLAGS=-buildvcs=false

# Module downloads in their own layer: the root module, the distribution module (cmd/, which
# replaces the root with ../..) and the local stand-ins its go.mod also replaces.
COPY go.mod go.sum ./
COPY cmd/otelcol-gpumem/go.mod cmd/otelcol-gpumem/go.sum cmd/otelcol-gpumem/
COPY internal/ocbstubs/ internal/ocbstubs/
RUN --mount=type=cache,target=/go/pkg/mod \
    cd cmd/otelcol-gpumem && go mod download

COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    make build && ./bin/otelcol-gpumem components > /dev/null

# Runtime stage: glibc, because the binary links libc and dlopens libnvidia-ml.so.1, which the
# NVIDIA container runtime mounts in at start (it is not part of the image). The runtime's
# ldconfig hook expects a Debian-like /etc/ld.so.conf.d, which slim has.
FROM debian:bookworm-slim
# CA roots for TLS to an OTLP backend.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# At / like the upstream collector images: the OpenTelemetry Collector Helm chart runs
# /<command.name>.
COPY --from=build /src/bin/otelcol-gpumem /otelcol-gpumem

# Non-root by default (numeric, so Kubernetes can verify runAsNonRoot). The node agent
# overrides this with uid 0 to read pod logs and the kernel log; see deploy/README.md.
USER 65532:65532
EXPOSE 4317 4318 13133
ENTRYPOINT ["/otelcol-gpumem"]
