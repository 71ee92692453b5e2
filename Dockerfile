# syntax=docker/dockerfile:1
#
# The otelcol-gpumem image, in the release pattern of the upstream collector images: the
# binary is built outside (`make build`, the same binary the end-to-end tests run) and copied
# into a runtime base. `make image` does both with podman or docker:
#   make image                                   # ghcr.io/gpumem/otelcol-gpumem:0.1.0
#   make build && docker build -t ghcr.io/gpumem/otelcol-gpumem:0.1.0 .
#   docker run --rm --gpus all ghcr.io/gpumem/otelcol-gpumem:0.1.0 --config=/path/to/config.yaml
# Kubernetes manifests and Helm values using it: deploy/. Where no registry can be reached,
# scripts/image-base.sh makes the base from the machine's Debian mirror and `make image`
# passes it as BASE.

# Runtime base: glibc, because the binary is cgo (go-nvml dlopens libnvidia-ml.so.1, which the
# NVIDIA container runtime mounts in at start; it is not part of the image), and no newer
# glibc than the binary was linked against (`make image` checks). The runtime's ldconfig hook
# expects a Debian-like /etc/ld.so.conf.d, which Debian has.
ARG BASE=debian:bookworm-slim
FROM ${BASE}

# CA roots for TLS to an OTLP backend (slim lacks them; the locally made base has them).
RUN if [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi

# At / like the upstream collector images: the OpenTelemetry Collector Helm chart runs
# /<command.name>. The build context is bin/otelcol-gpumem alone (.dockerignore).
COPY --chmod=0755 bin/otelcol-gpumem /otelcol-gpumem

# Non-root by default (numeric, so Kubernetes can verify runAsNonRoot). The node agent
# overrides this with uid 0 to read pod logs and the kernel log; see deploy/README.md.
USER 65532:65532
EXPOSE 4317 4318 13133
ENTRYPOINT ["/otelcol-gpumem"]
