#!/usr/bin/env bash
# Mutation testing of the pure packages with gremlins (github.com/go-gremlins/gremlins, a go
# tool pinned in go.mod): each mutant (a flipped comparison, a changed operator) reruns the
# package's tests, and a mutant the tests still pass is a promise no test holds. Slow (minutes
# per package on two cores), so not part of `make test`.
#
#   make mutate                                   all pure packages
#   make mutate MUTATE_PKGS=internal/xid          one package
#
# Writes bin/mutate/<pkg>.json (gremlins' machine-readable result, surviving mutants with line
# and column) and prints the efficacy (killed / (killed + lived)) per package.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=${MUTATE_PKGS:-"processor/oomclassifier/internal/parse processor/oomclassifier/internal/classify processor/oomclassifier/internal/window internal/xid receiver/gpumemreceiver/internal/procfs receiver/gpumemreceiver/internal/kmsg"}
out=${MUTATE_OUT:-bin/mutate}
workers=${MUTATE_WORKERS:-0} # 0: gremlins' default, one per CPU
# gremlins times a mutant out at this multiple of the unmutated run. Our pure packages' tests
# take milliseconds, so at its default a loaded machine reports most mutants TIMED OUT (not
# counted in the efficacy at all): 268 of 423 in classify at 3, none at 20.
timeout_coeff=${MUTATE_TIMEOUT_COEFF:-20}
# The parse package's exhaustive prefilter test (every length × offset × pattern, seconds per
# run) checks a fixed sample under PARSE_SAMPLE, so that a run over all its mutants fits in under
# an hour on two cores; the full test still runs in `make test`.
export PARSE_SAMPLE=1
mkdir -p "$out"

failed=()
for pkg in $pkgs; do
	echo "== $pkg"
	rm -f "$out/${pkg//\//_}.json"
	# A package whose tests fail unmutated cannot be measured: say so and go on.
	if ! go tool gremlins unleash --workers "$workers" --timeout-coefficient "$timeout_coeff" \
		-o "$out/${pkg//\//_}.json" "./$pkg" > "$out/${pkg//\//_}.log" 2>&1; then
		failed+=("$pkg")
	fi
	tail -n 5 "$out/${pkg//\//_}.log"
done

echo
printf '%-45s %7s %7s %7s %11s %9s\n' package killed lived timeout not_covered efficacy
for pkg in $pkgs; do
	[ -f "$out/${pkg//\//_}.json" ] || { printf '%-45s not measured (see %s)\n' "$pkg" "$out/${pkg//\//_}.log"; continue; }
	python3 - "$pkg" "$out/${pkg//\//_}.json" <<'PY'
import json, sys
pkg, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
timed = sum(1 for f in d.get("files", []) for m in f["mutations"] if m["status"] == "TIMED OUT")
print("%-45s %7d %7d %7d %11d %8.1f%%" % (pkg, d["mutants_killed"], d["mutants_lived"], timed,
      d["mutants_not_covered"], d["test_efficacy"]))
PY
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "gremlins failed on: ${failed[*]}" >&2
	exit 1
fi
