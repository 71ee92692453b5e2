#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZTIME (default 10s) each, with FUZZPARALLEL
# workers (default 1: on two cores more workers starve the coordinator).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
	pkg=./$(dirname "${file#./}")
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
		echo "== $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel "${FUZZPARALLEL:-1}" "$pkg"
	done
done
