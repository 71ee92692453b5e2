#!/usr/bin/env bash
# Makes the runtime base image for `make image` where no registry can be reached: a Debian
# minbase (glibc, ca-certificates) from this machine's own apt mirror, imported into the
# container engine as localhost/otelcol-gpumem-base:<release>. Prints the image's name.
#
#   scripts/image-base.sh [release]      # default bookworm: the release the binary is built on
#
# Cached twice, keyed by the release: the engine's image store (a warm run returns at once)
# and $CACHE/base-<release>.tar (survives an engine reset; debootstrap's .debs too).
# Needs root and debootstrap. The mirror is read from /etc/apt/sources.list{,.d}: no mirror
# host is written here.
set -euo pipefail
release=${1:-bookworm}
engine=${ENGINE:-$(dirname "$0")/container-engine.sh}
[ -x "$engine" ] || engine=$(command -v "$engine")
CACHE=${OTELCOL_GPUMEM_CACHE:-/var/cache/otelcol-gpumem}
image=localhost/otelcol-gpumem-base:$release
tarball=$CACHE/base-$release.tar

log() { echo "image-base: $*" >&2; }

if "$engine" image inspect "$image" >/dev/null 2>&1; then
	log "$image is cached in the engine's store"
	echo "$image"
	exit 0
fi

# The first URI of an apt source that serves $release (deb822 or one-line format).
mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v rel="$release" '
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { if (uri != "" && ok) { print uri; exit } uri = ""; ok = 0; next }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == rel) ok = 1 }
			END { if (uri != "" && ok) print uri }' "$f"
	done
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -e 's/\[[^]]*\]//' | awk -v rel="$release" '$1 == "deb" && $3 == rel { print $2 }' || true
}

if [ ! -s "$tarball" ]; then
	[ "$(id -u)" = 0 ] || { log "debootstrap needs root"; exit 1; }
	command -v debootstrap >/dev/null || { log "debootstrap is not installed"; exit 1; }
	url=$(mirror | head -n1 || true)
	[ -n "$url" ] || { log "no apt source for $release in /etc/apt/sources.list{,.d}"; exit 1; }
	mkdir -p "$CACHE/debs-$release"
	root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	log "debootstrap --variant=minbase $release from the machine's apt mirror"
	debootstrap --variant=minbase --include=ca-certificates --cache-dir="$CACHE/debs-$release" \
		"$release" "$root" "$url" >&2
	# What debian:*-slim leaves out: documentation, manuals, locales, apt's lists and caches.
	rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
		"$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* \
		"$root"/var/cache/debconf/*-old "$root"/var/log/* "$root"/tmp/* "$root"/dev/*
	tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
fi
log "importing $tarball as $image"
"$engine" import --change 'CMD ["/bin/sh"]' "$tarball" "$image" >/dev/null
echo "$image"
