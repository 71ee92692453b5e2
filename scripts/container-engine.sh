#!/usr/bin/env bash
# Runs the container engine present on this machine with the given arguments: $ENGINE when
# set, else podman, else docker (whichever answers `info`). `--which` prints its name; exit
# status 3 when there is none.
#
# Podman: where a container with the machine's own settings does not start (the CI machines:
# no systemd, RLIMIT_NOFILE may not be raised), scripts/podman/containers.conf is used
# instead. The probe runs a locally made base image, so it applies once scripts/image-base.sh
# has made one; $CONTAINERS_CONF set by the caller is always kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
works() { command -v "$1" >/dev/null 2>&1 && "$1" info >/dev/null 2>&1; }
pick() {
	if [ -n "${ENGINE:-}" ]; then echo "$ENGINE"; return; fi
	local e
	for e in podman docker; do
		if works "$e"; then echo "$e"; return; fi
	done
	return 3
}
engine=$(pick) || { echo "container-engine: neither podman nor docker works here" >&2; exit 3; }
case "${1:-}" in
--which) echo "$engine"; exit 0 ;;
build | run | create | start | stop | kill | rm | exec)
	if [ "$(basename "$engine")" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
		probe=$(podman images --format '{{.Repository}}:{{.Tag}}' --filter reference='localhost/otelcol-gpumem-base' | head -n1 || true)
		if [ -n "$probe" ] && ! podman run --rm --network none --entrypoint /bin/true "$probe" >/dev/null 2>&1; then
			export CONTAINERS_CONF=$here/podman/containers.conf
		fi
	fi
	;;
esac
exec "$engine" "$@"
