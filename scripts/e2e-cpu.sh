#!/usr/bin/env bash
# The CPU the oom_classifier processor adds to a logs pipeline of ordinary
# application lines, end to end, measured in the running distribution
# (issue 17 item 5). Three pipelines, otlp(http) -> ... -> debug:
#
#   none            no processor
#   resource        the stock resource processor upserting one resource
#                   attribute: the anchor, what "any processor at all" costs
#   oom_classifier  the processor, default config
#
# Each round starts three fresh collectors, one per config, sends each WARMUP
# records (not counted), then RECORDS log records to each over OTLP/HTTP,
# alternating: CHUNK requests (of 1024 records) to one, then the next, round
# and round, so that all three see the same load on this shared machine over
# the round (the receiver answers once the pipeline has consumed a request:
# one collector works at a time). Each collector's CPU is all its threads'
# run time from /proc/<pid>/task/*/schedstat in ns (/proc/<pid>/stat
# utime+stime where there is no schedstat), read before and after. Medians
# over ROUNDS rounds are compared, and so are the per-round differences.
#
# Then one more collector, oom_classifier with the pprof extension, is sent
# records for PROFILE_SECONDS while a CPU profile covers the whole send; the
# profile's flat and cum CPU of the prefilter and the per-record path,
# divided by the records sent, is their cost per line inside the collector.
#
#   make build && scripts/e2e-cpu.sh
#     RECORDS=600000 ROUNDS=5 CHUNK=8 WARMUP=65536 ENCODING=proto PROFILE_SECONDS=15
#     PROFILE_OUT=/tmp/e2e-cpu-oom_classifier.pprof (kept for go tool pprof)
#
# Loopback only; about two minutes on a 2-core VM. Not part of make test: it
# is a measurement. The requests are those of the processor's
# BenchmarkPipelineCold (scripts/e2e-cpu-send.py: 16 resources x 2 scopes x
# 32 records, 60-byte ordinary lines, protobuf; ENCODING=json sends the same
# as OTLP JSON). Needs python3 (standard library only), curl and go.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${OTELCOL_GPUMEM_BIN:-$PWD/bin/otelcol-gpumem}
records=${RECORDS:-600000}
rounds=${ROUNDS:-5}
warmup=${WARMUP:-65536}
chunk=${CHUNK:-8}
encoding=${ENCODING:-proto}
profile_s=${PROFILE_SECONDS:-15}
profile_out=${PROFILE_OUT:-/tmp/e2e-cpu-oom_classifier.pprof}
port=${PORT:-14318}
pprof_port=${PPROF_PORT:-11777}
per_batch=1024 # e2e-cpu-send.py's batch
records=$(((records + per_batch - 1) / per_batch * per_batch))
configs=(none resource oom_classifier)
work=$(mktemp -d)
declare -A pids
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

config() { # $1: a config name; $2: its port; $3: "pprof" adds the pprof extension
	local procs="[]" ext=""
	case $1 in
	resource) procs="[resource]" ;;
	oom_classifier) procs="[oom_classifier]" ;;
	esac
	[ "${3:-}" = pprof ] && ext="
extensions:
  pprof:
    endpoint: 127.0.0.1:$pprof_port"
	cat <<YAML
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$2
processors:
  resource:
    attributes:
      - {key: deployment.environment.name, value: e2e, action: upsert}
  oom_classifier: {}
exporters:
  debug:
    verbosity: basic$ext
service:
  extensions: [$([ -n "$ext" ] && echo pprof)]
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
declare -A ports
for i in 0 1 2; do
	c=${configs[$i]}
	ports[$c]=$((port + i))
	config "$c" "${ports[$c]}" >"$work/$c.yaml"
done
ports[profile]=$port
config oom_classifier "$port" pprof >"$work/profile.yaml"
url() { echo "http://127.0.0.1:${ports[$1]}/v1/logs"; }

if [ -r /proc/self/schedstat ]; then
	cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
else
	cpu_ns() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f\n", ($14 + $15) * 1e9 / hz}' "/proc/$1/stat"; }
fi

start() { # $1: config file stem
	"$bin" --config "$work/$1.yaml" >"$work/$1.log" 2>&1 &
	pids[$1]=$!
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "$(url "$1")" && break
		sleep 0.1
	done
	python3 scripts/e2e-cpu-send.py "$(url "$1")" "$warmup" "$encoding"
}
stop() {
	kill "${pids[$1]}"
	wait "${pids[$1]}" 2>/dev/null || true
	unset "pids[$1]"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A cpu before
for r in $(seq 1 "$rounds"); do
	line="round $r:"
	for c in "${configs[@]}"; do start "$c"; done
	for c in "${configs[@]}"; do before[$c]=$(cpu_ns "${pids[$c]}"); done
	python3 scripts/e2e-cpu-send.py interleave "$records" "$encoding" "$chunk" \
		"$(url none)" "$(url resource)" "$(url oom_classifier)"
	for c in "${configs[@]}"; do cpu[$c,$r]=$(($(cpu_ns "${pids[$c]}") - ${before[$c]})); done
	for c in "${configs[@]}"; do
		stop "$c"
		line+=" $c $(awk -v n="${cpu[$c,$r]}" -v r="$records" 'BEGIN{printf "%.0f", n / r}')"
	done
	echo "$line  (CPU ns/record)"
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
values() { for r in $(seq 1 "$rounds"); do echo "${cpu[$1,$r]}"; done; }
none=$(median $(values none))
res=$(median $(values resource))
oom=$(median $(values oom_classifier))
# Per round, each processor's CPU above "none" in percent of "none", and the
# difference between the two (percentage points).
pp=()
for r in $(seq 1 "$rounds"); do
	pp+=("$(awk -v n="${cpu[none,$r]}" -v s="${cpu[resource,$r]}" -v o="${cpu[oom_classifier,$r]}" \
		'BEGIN{printf "%.2f", 100 * (o - s) / n}')")
done
echo "load average after rounds: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$none" -v s="$res" -v o="$oom" -v r="$records" -v e="$encoding" -v pp="$(median "${pp[@]}")" -v all="${pp[*]}" 'BEGIN{
	printf "median collector CPU per record (%d records, %s, median of rounds):\n", r, e
	printf "  none            %6.0f ns\n", n / r
	printf "  resource        %6.0f ns  %+5.1f%% vs none (the anchor)\n", s / r, 100 * (s - n) / n
	printf "  oom_classifier  %6.0f ns  %+5.1f%% vs none, %+5.1f%% vs resource (ratio %.3f)\n", o / r, 100 * (o - n) / n, 100 * (o - s) / s, o / s
	printf "oom_classifier minus resource, in points of none: %+.1f pp of the medians; per round %s: median %+.1f pp (goal <= 2)\n", 100 * (o - s) / n, all, pp
}'

# The profile: records sent during a CPU profile that covers the whole send.
start profile
pbefore=$(cpu_ns "${pids[profile]}")
curl -s -o "$profile_out" "http://127.0.0.1:$pprof_port/debug/pprof/profile?seconds=$((profile_s + 2))" &
curl_pid=$!
sleep 1
sent=$(python3 scripts/e2e-cpu-send.py "$(url profile)" "-$profile_s" "$encoding")
pafter=$(cpu_ns "${pids[profile]}")
wait "$curl_pid"
stop profile
echo "load average after profile: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "profile: $profile_out, $sent records in ${profile_s}s, collector CPU $(awk -v c=$((pafter - pbefore)) -v n="$sent" 'BEGIN{printf "%.0f", c / n}') ns/record (schedstat)"
go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ms "$profile_out" 2>/dev/null | awk -v n="$sent" '
	function ms(s) { sub(/ms$/, "", s); return s + 0 }
	/^Duration:/ { print "  " $0 }
	/Total samples/ { match($0, /= [0-9.]+ms/); total = substr($0, RSTART + 2, RLENGTH - 2) }
	NF >= 6 && ($1 ~ /ms$/ || $1 == "0") {
		name = $6; for (i = 7; i <= NF; i++) name = name " " $i
		short = name; sub(/.*\//, "", short); sub(/ \(inline\)$/, "", short)
		want = 0
		if (short ~ /^parse\.(mayBeOOM|MayBeOOM|MayBeOOMOrXid|prefilter|prefilterSWAR|nextKey|keyWordIn|keyWordAt|keyBits)$/) want = 1
		if (short ~ /^oomclassifier\.(ordinaryRecord|mayBeXidLine|\(\*logsProcessor\)\.(scan|processLogs)|newStreams)$/) want = 1
		if (short ~ /^processorhelper\.NewLogs\.func1$/ || short ~ /^xid\.MayBeLine$/ || short ~ /^strings\.IndexByte$/) want = 1
		if (want) rows[short] = sprintf("  %-42s flat %6.1f  cum %6.1f ns/record", short, ms($1) * 1e6 / n, ms($4) * 1e6 / n)
	}
	END {
		printf "  whole collector (profile)                  %6.0f ns/record\n", ms(total) * 1e6 / n
		for (k in rows) print rows[k] | "sort"
	}'
