#!/usr/bin/env bash
# The CPU the oom_classifier processor adds to a logs pipeline of ordinary
# application lines, end to end, measured in the running distribution.
# Three pipelines, otlp(http) -> ... -> debug:
#
#   none            no processor
#   resource        the stock resource processor upserting one resource
#                   attribute: the anchor, what "any processor at all" costs
#   oom_classifier  the processor, default config
#
# ROUNDS rounds, each sending RECORDS log records to each pipeline over
# OTLP/HTTP, alternating: CHUNK requests (of 1024 records) to one, then the
# next, round and round (the receiver answers once the pipeline has consumed
# a request: one pipeline works at a time), after WARMUP records each that are
# not counted. CPU is all threads' run time from /proc/<pid>/task/*/schedstat.
#
#   MODE=pipelines  (default) one fresh collector per round holds the three
#                   pipelines, each behind its own receiver; the sender reads
#                   the collector's CPU around every chunk and charges it to
#                   that chunk's pipeline, the order turning each time round.
#                   The three share one runtime: its garbage collector (about
#                   half the CPU at these heap sizes) and scheduler work for
#                   all of them alike.
#   MODE=processes  three fresh collectors per round, one per pipeline, each
#                   one's CPU read before and after the round; the send order
#                   rotates from round to round.
#
# Either way a round's difference between two pipelines swings by several
# points on a small shared VM (in pipelines mode as much between three
# identical pipelines: the garbage collector's work lands on whichever chunk
# runs), so the script runs many short rounds and prints the per-round
# differences, their median, and their mean with two standard errors.
#
# Then the profiles, which do not swing so: one more collector per processor
# (resource, then oom_classifier, each with the pprof extension) is sent
# records for PROFILE_SECONDS while a CPU profile covers the whole send. Each
# processor's own function (its processLogs, cum) divided by the records
# sent is its cost per record inside the collector, and that over the whole
# profile per record its share of the collector's CPU; the difference of the
# two shares is the processor's cost above the anchor, in points. The
# prefilter's and the per-record path's rows are printed the same way.
#
#   make build && scripts/e2e-cpu.sh
#     MODE=pipelines ROUNDS=30 RECORDS=300000 CHUNK=8 WARMUP=32768 ENCODING=proto
#     PROFILE_SECONDS=15 PROFILE_OUT=/tmp/e2e-cpu (PROFILE_OUT-resource.pprof and
#     PROFILE_OUT-oom_classifier.pprof are kept for go tool pprof)
#
# Loopback only; about three minutes on a 2-core VM. Not part of make test: it
# is a measurement. The requests are those of the processor's
# BenchmarkPipelineCold (scripts/e2e-cpu-send.py: 16 resources x 2 scopes x
# 32 records, 60-byte ordinary lines, protobuf; ENCODING=json sends the same
# as OTLP JSON). Needs python3 (standard library only), curl and go.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${OTELCOL_GPUMEM_BIN:-$PWD/bin/otelcol-gpumem}
mode=${MODE:-pipelines}
records=${RECORDS:-300000}
rounds=${ROUNDS:-30}
warmup=${WARMUP:-32768}
chunk=${CHUNK:-8}
encoding=${ENCODING:-proto}
profile_s=${PROFILE_SECONDS:-15}
profile_out=${PROFILE_OUT:-/tmp/e2e-cpu}
port=${PORT:-14318}
pprof_port=${PPROF_PORT:-11777}
per_batch=1024 # e2e-cpu-send.py's batch
records=$(((records + per_batch - 1) / per_batch * per_batch))
configs=(none resource oom_classifier)
work=$(mktemp -d)
declare -A pids
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

config() { # $1: a config name (or "pipelines": all three); $2: its (first) port; $3: "pprof" adds the pprof extension
	local ext=""
	[ "${3:-}" = pprof ] && ext="
extensions:
  pprof:
    endpoint: 127.0.0.1:$pprof_port"
	cat <<YAML
processors:
  resource:
    attributes:
      - {key: deployment.environment.name, value: e2e, action: upsert}
  oom_classifier: {}
exporters:
  debug:
    verbosity: basic$ext
YAML
	echo "receivers:"
	local i=0 c
	for c in "${configs[@]}"; do
		if [ "$1" = pipelines ] || [ "$1" = "$c" ]; then
			printf '  otlp/%s:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:%d\n' "$c" $(($2 + i))
			i=$((i + 1))
		fi
	done
	printf 'service:\n  extensions: [%s]\n' "$([ -n "$ext" ] && echo pprof)"
	printf '  telemetry:\n    logs: {level: warn}\n    metrics: {level: none}\n  pipelines:\n'
	for c in "${configs[@]}"; do
		if [ "$1" = pipelines ] || [ "$1" = "$c" ]; then
			local procs="[]"
			[ "$c" != none ] && procs="[$c]"
			printf '    logs/%s:\n      receivers: [otlp/%s]\n      processors: %s\n      exporters: [debug]\n' "$c" "$c" "$procs"
		fi
	done
}
declare -A ports
for i in 0 1 2; do
	c=${configs[$i]}
	ports[$c]=$((port + i))
	config "$c" "${ports[$c]}" >"$work/$c.yaml"
done
ports[pipelines]=$port
config pipelines "$port" >"$work/pipelines.yaml"
for c in resource oom_classifier; do
	ports[profile-$c]=$port
	config "$c" "$port" pprof >"$work/profile-$c.yaml"
done
url() { echo "http://127.0.0.1:${ports[$1]}/v1/logs"; }

if [ -r /proc/self/schedstat ]; then
	cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
else
	[ "$mode" = processes ] || { echo "MODE=pipelines needs /proc/<pid>/task/*/schedstat" >&2; exit 2; }
	cpu_ns() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f\n", ($14 + $15) * 1e9 / hz}' "/proc/$1/stat"; }
fi

start() { # $1: config file stem; warms up each of its receivers
	"$bin" --config "$work/$1.yaml" >"$work/$1.log" 2>&1 &
	pids[$1]=$!
	local u
	for u in "${@:2}"; do
		for _ in $(seq 1 100); do
			curl -s -o /dev/null "$u" && break
			sleep 0.1
		done
		python3 scripts/e2e-cpu-send.py "$u" "$warmup" "$encoding"
	done
}
stop() {
	kill "${pids[$1]}"
	wait "${pids[$1]}" 2>/dev/null || true
	unset "pids[$1]"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); MODE=$mode, $rounds rounds of $records records per pipeline"
declare -A cpu before
for r in $(seq 1 "$rounds"); do
	# Rotated each round: none first, then resource first, then oom_classifier.
	order=("${configs[@]:$(((r - 1) % 3))}" "${configs[@]:0:$(((r - 1) % 3))}")
	urls=("$(url "${order[0]}")" "$(url "${order[1]}")" "$(url "${order[2]}")")
	if [ "$mode" = pipelines ]; then
		# config pipelines gives the three receivers the ports the three collectors of
		# MODE=processes would have: urls stands for both.
		start pipelines "${urls[@]}"
		read -r -a got < <(python3 scripts/e2e-cpu-send.py pipelines "${pids[pipelines]}" "$records" "$encoding" "$chunk" "${urls[@]}")
		stop pipelines
		for i in 0 1 2; do cpu[${order[$i]},$r]=${got[$i]}; done
	else
		for c in "${configs[@]}"; do start "$c" "$(url "$c")"; done
		for c in "${configs[@]}"; do before[$c]=$(cpu_ns "${pids[$c]}"); done
		python3 scripts/e2e-cpu-send.py interleave "$records" "$encoding" "$chunk" "${urls[@]}"
		for c in "${configs[@]}"; do cpu[$c,$r]=$(($(cpu_ns "${pids[$c]}") - ${before[$c]})); done
		for c in "${configs[@]}"; do stop "$c"; done
	fi
	line="round $r:"
	for c in "${configs[@]}"; do
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
pp=() rp=()
for r in $(seq 1 "$rounds"); do
	pp+=("$(awk -v n="${cpu[none,$r]}" -v s="${cpu[resource,$r]}" -v o="${cpu[oom_classifier,$r]}" \
		'BEGIN{printf "%.2f", 100 * (o - s) / n}')")
	rp+=("$(awk -v n="${cpu[none,$r]}" -v s="${cpu[resource,$r]}" 'BEGIN{printf "%.2f", 100 * (s - n) / n}')")
done
# mean_2se: the mean of its arguments and two standard errors of it.
mean_2se() { printf '%s\n' "$@" | awk '{s += $1; q += $1 * $1; n++} END {m = s / n; v = n > 1 ? (q - n * m * m) / (n - 1) : 0; printf "%+.2f pp +- %.2f", m, 2 * sqrt(v > 0 ? v / n : 0)}'; }
echo "load average after rounds: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$none" -v s="$res" -v o="$oom" -v r="$records" -v e="$encoding" 'BEGIN{
	printf "median collector CPU per record (%d records, %s, median of rounds):\n", r, e
	printf "  none            %6.0f ns\n", n / r
	printf "  resource        %6.0f ns  %+5.1f%% vs none (the anchor)\n", s / r, 100 * (s - n) / n
	printf "  oom_classifier  %6.0f ns  %+5.1f%% vs none, %+5.1f%% vs resource (ratio %.3f)\n", o / r, 100 * (o - n) / n, 100 * (o - s) / s, o / s
}'
echo "resource minus none, per round: ${rp[*]}"
echo "  median $(median "${rp[@]}") pp, mean $(mean_2se "${rp[@]}") (two standard errors)"
echo "oom_classifier minus resource, in points of none, per round: ${pp[*]}"
echo "  median $(median "${pp[@]}") pp, mean $(mean_2se "${pp[@]}") (two standard errors; goal <= 2)"

# The profiles: records sent during a CPU profile that covers the whole send.
declare -A share
for c in resource oom_classifier; do
	out=$profile_out-$c.pprof
	start "profile-$c" "$(url "profile-$c")"
	pbefore=$(cpu_ns "${pids[profile-$c]}")
	curl -s -o "$out" "http://127.0.0.1:$pprof_port/debug/pprof/profile?seconds=$((profile_s + 2))" &
	curl_pid=$!
	sleep 1
	sent=$(python3 scripts/e2e-cpu-send.py "$(url "profile-$c")" "-$profile_s" "$encoding")
	pafter=$(cpu_ns "${pids[profile-$c]}")
	wait "$curl_pid"
	stop "profile-$c"
	echo "profile of $c: $out, $sent records in ${profile_s}s, collector CPU $(awk -v c=$((pafter - pbefore)) -v n="$sent" 'BEGIN{printf "%.0f", c / n}') ns/record (schedstat), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ms "$out" 2>/dev/null | awk -v n="$sent" -v share_out="$work/share-$c" '
		function ms(s) { sub(/ms$/, "", s); return s + 0 }
		/^Duration:/ { print "  " $0 }
		/Total samples/ { match($0, /= [0-9.]+ms/); total = substr($0, RSTART + 2, RLENGTH - 2) }
		NF >= 6 && ($1 ~ /ms$/ || $1 == "0") {
			name = $6; for (i = 7; i <= NF; i++) name = name " " $i
			short = name; sub(/.*\//, "", short); sub(/ \(inline\)$/, "", short)
			want = 0
			if (short ~ /^parse\.(mayBeOOM|MayBeOOM|MayBeOOMOrXid|prefilter|prefilterSWAR|nextKey|keyWordIn|keyWordAt|keyBits)$/) want = 1
			if (short ~ /^oomclassifier\.(ordinaryRecord|mayBeXidLine|\(\*logsProcessor\)\.(scan|processLogs)|newStreams)$/) want = 1
			if (short ~ /^resourceprocessor\.\(\*resourceProcessor\)\.processLogs$/) want = 1
			if (short ~ /^processorhelper\.NewLogs\.func1$/ || short ~ /^xid\.MayBeLine$/ || short ~ /^strings\.IndexByte$/) want = 1
			if (want) rows[short] = sprintf("  %-42s flat %6.1f  cum %6.1f ns/record", short, ms($1) * 1e6 / n, ms($4) * 1e6 / n)
			if (short ~ /\)\.processLogs$/) proc += ms($4)
		}
		END {
			printf "  whole collector (profile)                  %6.0f ns/record\n", ms(total) * 1e6 / n
			for (k in rows) print rows[k] | "sort"
			close("sort")
			printf "  the processor (its processLogs, cum)       %6.1f ns/record, %.2f%% of the collector\n", proc * 1e6 / n, 100 * proc / ms(total)
			printf "%.4f\n", 100 * proc / ms(total) > share_out
		}'
	share[$c]=$(cat "$work/share-$c")
done
awk -v s="${share[resource]}" -v o="${share[oom_classifier]}" 'BEGIN{
	printf "oom_classifier minus resource, in the profiles: %.2f%% - %.2f%% of the collector = %+.2f pp (goal <= 2)\n", o, s, o - s
}'
