#!/usr/bin/env bash
# `make smoke`: the first five minutes. Runs the demo configuration (simulated GPUs, no
# driver needed), checks the collector's own health, waits for the scenario's events and
# prints the three things to look at. Exits non-zero when one does not come.
#
#   scripts/smoke.sh [BIN]     SMOKE_SECONDS (default 90): how long to wait for the scenario's
#                              OOM (it comes at ~50 s); SMOKE_HEALTH (default 127.0.0.1:13133)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/otelcol-gpumem}
wait_s=${SMOKE_SECONDS:-90}
health=${SMOKE_HEALTH:-127.0.0.1:13133}
metrics=/tmp/otelcol-gpumem-demo-metrics.jsonl   # testdata/demo/config.yaml's file exporter
out=$(mktemp /tmp/otelcol-gpumem-smoke.XXXXXX.log)

rm -f "$metrics"
# The demo configuration as shipped, plus a health_check extension for this check.
"$bin" --config testdata/demo/config.yaml \
	--config "yaml:extensions::health_check::endpoint: $health" \
	--config "yaml:service::extensions: [health_check]" >"$out" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT

fail() { echo "smoke: $*" >&2; echo "--- collector output (last 40 lines of $out):" >&2; tail -n 40 "$out" >&2; exit 1; }

for _ in $(seq 1 120); do
	kill -0 $pid 2>/dev/null || fail "the collector exited"
	if curl -fsS "http://$health/" >/dev/null 2>&1; then break; fi
	sleep 0.5
done
curl -fsS "http://$health/" >/dev/null 2>&1 || fail "no answer from http://$health/ within 60 s"
echo "smoke: the collector is up and healthy (http://$health/ answers 200); waiting up to $wait_s s for the scenario's OOM"

# The built-in scenario: Xid 31 at 20 s, the runway warning at ~20 s, the OOM at 50 s.
deadline=$((SECONDS + wait_s))
while ! grep -q 'gpu.oom.cause' "$out"; do
	kill -0 $pid 2>/dev/null || fail "the collector exited"
	[ $SECONDS -lt $deadline ] || fail "no classified OOM within $wait_s s"
	sleep 1
done
sleep 1

# The debug exporter's lines: "     -> gpu.oom.cause: Str(memory_leak)".
attr() { grep -m1 -- "-> $1: Str(" "$out" | sed -e 's/.*: Str(//' -e 's/)$//' || true; }
echo
echo "The three things to look at:"
echo
echo "1. GPU metrics, one collection a second per GPU: $metrics ($(wc -l <"$metrics") batches so far)"
echo "     tail -f $metrics      # or export them to your backend (docs/metrics.md)"
echo
echo "2. Warnings before the crash (log records):"
grep -m1 -o 'Body: Str(NVRM: Xid.*' "$out" | sed -e 's/^Body: Str(/     Xid:        /' -e 's/)$//' || echo "     Xid:        (none seen)"
grep -m1 -o 'nvidia.gpu.memory.oom_predicted' "$out" >/dev/null &&
	echo "     runway:     nvidia.gpu.memory.oom_predicted for GPU 3 (memory runs out at the current growth)" ||
	echo "     runway:     (none seen)"
echo
echo "3. The OOM, classified:"
echo "     cause:          $(attr gpu.oom.cause) ($(attr gpu.oom.confidence) confidence)"
echo "     evidence:       $(attr gpu.oom.evidence)"
echo "     recommendation: $(attr gpu.oom.recommendation)"
echo
echo "Full console output: $out. Next: README.md (a GPU host, Kubernetes), docs/troubleshooting.md."
