#!/usr/bin/env bash
# Builds the image from the binary `make build` left in bin/ (Dockerfile), checks that the
# binary starts in it, and reports its size and how long the build took.
#
#   scripts/image.sh IMAGE [BASE]
#
# BASE: empty for the Dockerfile's (debian:bookworm-slim, from a registry); `local` for one
# made here from the machine's Debian mirror (scripts/image-base.sh, root and debootstrap);
# `auto` for local where that can be done, else the Dockerfile's; or any image name.
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:?usage: scripts/image.sh IMAGE [BASE]}
base=${2:-}
engine=scripts/container-engine.sh
name=$("$engine" --which)
[ -x bin/otelcol-gpumem ] || { echo "image: bin/otelcol-gpumem is missing: make build" >&2; exit 1; }

start=$(date +%s)
if [ "$base" = auto ]; then
	base=
	if [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null; then base=local; fi
fi
if [ "$base" = local ]; then
	base=$(scripts/image-base.sh)
fi
args=(build --tag "$image" --file Dockerfile)
[ -z "$base" ] || args+=(--build-arg "BASE=$base")
"$engine" "${args[@]}" .
# The binary links against the base's glibc: a binary built on a newer one fails here.
"$engine" run --rm --network none "$image" --version
size=$("$engine" image inspect --format '{{.Size}}' "$image")
echo "image: $image, $((size / 1000000)) MB, on ${base:-debian:bookworm-slim}, built by $name in $(($(date +%s) - start)) s"
