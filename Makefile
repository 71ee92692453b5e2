# otelcol-gpumem. `make demo` runs the distribution on the simulated backend; `make test` is CI.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/otelcol-gpumem
DIST  := cmd/otelcol-gpumem
export CGO_ENABLED := 1
# go-nvml's cgo preamble uses NVML calls the header marks deprecated: not ours to fix.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build generate check-generated demo smoke image image-test test unit rules e2e bench bench-fleet fuzz mutate lint gpu-smoke clean

all: build

# The distribution: ocb generates $(DIST) from builder-config.yaml (committed), go builds it.
build:
	cd $(DIST) && $(GO) build -trimpath -o ../../$(BIN) .

generate:
	mkdir -p $(DIST)
	$(GO) tool builder --config builder-config.yaml --skip-compilation
	gofmt -w $(DIST)/*.go  # ocb's templates leave spacing gofmt would change

# Fails when the committed distribution sources differ from a fresh generation.
check-generated: generate
	@if [ -n "$$(git status --porcelain -- $(DIST))" ]; then \
		git status --porcelain -- $(DIST); git diff --stat -- $(DIST); \
		echo "$(DIST) is stale: run 'make generate' and commit the result"; exit 1; fi

demo: build
	$(BIN) --config testdata/demo/config.yaml

# The first five minutes: the demo configuration in the background, its own health checked,
# then the three things to look at (the scenario's OOM comes at ~50 s; SMOKE_SECONDS bounds
# the wait, SMOKE_HEALTH moves the health check off 127.0.0.1:13133).
smoke: build
	scripts/smoke.sh $(BIN)

# The image users deploy (Dockerfile: the binary from `make build` in a glibc runtime base),
# built with podman or docker, whichever works here. IMAGE_BASE: empty for the Dockerfile's
# debian:bookworm-slim; `local` to make the base from this machine's Debian mirror (no
# registry needed; root and debootstrap); any image name.
IMAGE      ?= ghcr.io/gpumem/otelcol-gpumem:0.1.0
IMAGE_BASE ?=
image: build
	scripts/image.sh $(IMAGE) $(IMAGE_BASE)

# Builds the image (on a local base where debootstrap can run) and runs it as the agent
# DaemonSet does (deploy/image_e2e_test.go). Skipped, saying so, where no engine works.
TEST_IMAGE ?= localhost/otelcol-gpumem:test
image-test: build
	@if ! scripts/container-engine.sh --which >/dev/null 2>&1; then \
		echo "SKIP image-test: no container engine works here (install podman, or start docker; .ci/run installs podman)"; \
		exit 0; fi; \
	set -e; scripts/image.sh $(TEST_IMAGE) $(or $(IMAGE_BASE),auto); \
	OTELCOL_GPUMEM_IMAGE=$(TEST_IMAGE) $(GO) test -count=1 -v -tags 'e2e image' -run '^TestImage$$' -timeout 10m ./deploy/

test: lint check-generated unit rules e2e image-test

# Unit tests under the race detector (one run covers both).
unit:
	$(GO) test -race -count=1 ./...

# The shipped Prometheus alert rules: syntax, then promtool's unit tests of each firing and not.
rules:
	promtool check rules deploy/prometheus/alerts.yaml
	promtool test rules deploy/prometheus/alerts_test.yaml

# deploy/ includes TestPrometheus: a real Prometheus (Debian's package) scraping the binary.
e2e: build
	OTELCOL_GPUMEM_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -tags e2e -timeout 15m ./test/e2e/... ./deploy/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

# The gateway's sizing (deploy/README.md, "Sizing per 1,000 GPUs"): the shipped gateway fed
# BENCH_HOSTS replayed agents for BENCH_SECONDS seconds of data, as shipped, without the
# classifier and with a stock processor instead; then the window's bytes per device.
BENCH_HOSTS   ?= 1000
BENCH_SECONDS ?= 20
bench-fleet: build
	BENCH_FLEET=1 BENCH_HOSTS=$(BENCH_HOSTS) BENCH_SECONDS=$(BENCH_SECONDS) OTELCOL_GPUMEM_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -tags e2e -run '^TestBenchFleet$$' -v -timeout 30m ./deploy/ | grep -E '\||hosts ×|one node:'
	$(GO) test -run '^$$' -bench BenchmarkFleetWindow -benchtime 1x ./processor/oomclassifier/internal/window/ | grep Benchmark

# Each fuzz target briefly (FUZZTIME each); `make fuzz FUZZTIME=5m` for a longer hunt.
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# Mutation testing of the pure packages (gremlins); slow, so not part of `test`.
# `make mutate MUTATE_PKGS=internal/xid` for one package.
mutate:
	MUTATE_PKGS="$(MUTATE_PKGS)" scripts/mutate.sh

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd $(DIST) && $(GO) vet ./...

# On a machine with an NVIDIA GPU: the built binary against real NVML while torch allocates.
gpu-smoke: build
	scripts/gpu-smoke.sh

clean:
	rm -rf bin
