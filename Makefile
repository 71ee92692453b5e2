# otelcol-gpumem. `make demo` runs the distribution on the simulated backend; `make test` is CI.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/otelcol-gpumem
DIST  := cmd/otelcol-gpumem
export CGO_ENABLED := 1
# go-nvml's cgo preamble uses NVML calls the header marks deprecated: not ours to fix.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build generate check-generated demo test unit rules e2e bench fuzz mutate lint gpu-smoke clean

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

test: lint check-generated unit rules e2e

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
