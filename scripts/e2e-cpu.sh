#!/usr/bin/env bash
# The CPU the oom_classifier processor adds to a logs pipeline of ordinary
# application lines, end to end: the distribution with otlp(http) ->
# oom_classifier -> debug against the same pipeline without the processor.
# Each run starts a fresh collector, sends RECORDS log records over OTLP/HTTP
# in batches of BATCH (the receiver answers once the pipeline has consumed a
# batch, so when the sender is done the collector is too), and reads the
# collector's user+system CPU from /proc before and after. Runs alternate
# between the two configs, ROUNDS times each; the medians are compared.
#
#   make build && scripts/e2e-cpu.sh            # RECORDS=300000 BATCH=1000 ROUNDS=3
#
# The lines are the ordinary application lines of the parser's benchmark
# (processor/oomclassifier/internal/parse/bench_mixed_test.go): representative
# lines written for it, none an OOM. Needs python3 (standard library only).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${OTELCOL_GPUMEM_BIN:-$PWD/bin/otelcol-gpumem}
records=${RECORDS:-300000}
batch=${BATCH:-1000}
rounds=${ROUNDS:-3}
port=${PORT:-14318}
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

config() { # $1: with|without
	local procs="[]"
	[ "$1" = with ] && procs="[oom_classifier]"
	cat <<YAML
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$port
processors:
  oom_classifier: {}
exporters:
  debug:
    verbosity: basic
service:
  telemetry:
    logs: {level: warn}
    metrics: {level: none}
  pipelines:
    logs:
      receivers: [otlp]
      processors: $procs
      exporters: [debug]
YAML
}
config with >"$work/with.yaml"
config without >"$work/without.yaml"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # $1: with|without; prints CPU seconds
	"$bin" --config "$work/$1.yaml" >"$work/$1.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/v1/logs" && break
		sleep 0.1
	done
	local before after
	before=$(cpu_ticks "$pid")
	python3 scripts/e2e-cpu-send.py "http://127.0.0.1:$port/v1/logs" "$records" "$batch"
	after=$(cpu_ticks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	awk -v a="$after" -v b="$before" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f\n", (a-b)/hz}'
}

declare -a with without
for r in $(seq 1 "$rounds"); do
	without+=("$(run without)")
	with+=("$(run with)")
	echo "round $r: without ${without[-1]}s with ${with[-1]}s CPU"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
mw=$(median "${with[@]}")
mo=$(median "${without[@]}")
awk -v w="$mw" -v o="$mo" -v n="$records" 'BEGIN{printf "median CPU for %d records: without %.2fs, with %.2fs: the processor adds %.1f%%\n", n, o, w, 100*(w-o)/o}'
