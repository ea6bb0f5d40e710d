#!/usr/bin/env bash
# npm run test:docker: the container suite (test/docker) against a real Docker engine.
#
# Finds an engine or starts one (scripts/docker-engine.sh; stopped again at the end if it
# started it), builds the image from the Dockerfile on the base scripts/base-image.sh
# names (node:20-bookworm-slim, or a local stand-in where no registry answers), then runs
# vitest.docker.config.ts with RINGKV_IMAGE set to it, and RINGKV_PREVIOUS_IMAGE to the
# image of the previous release (scripts/release-image.sh), which the upgrade test
# starts from. Where no engine can be had, it says so in one line and exits 0: the suite
# is skipped, not failed.
set -uo pipefail
cd "$(dirname "$0")/.."
err=$(mktemp)
engine=$(scripts/docker-engine.sh start 2>"$err")
if [ $? -ne 0 ]; then
  echo "test:docker: skipped — no Docker engine can be started here: $(tail -1 "$err")"
  rm -f "$err"
  exit 0
fi
rm -f "$err"
export "$(echo "$engine" | grep '^DOCKER_HOST=')"
started=$(echo "$engine" | sed -n 's/^STARTED=//p')
cleanup() { [ "$started" = 1 ] && scripts/docker-engine.sh stop; }
trap cleanup EXIT
export TESTCONTAINERS_RYUK_DISABLED=true # Ryuk is an image from a registry; the suite stops what it starts
# The mapped ports are on this machine: without this, testcontainers inside a container
# (this one has /.dockerenv) looks for the default bridge's gateway, which --bridge=none lacks.
export TESTCONTAINERS_HOST_OVERRIDE=${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}
t0=$(date +%s)
if ! base=$(scripts/base-image.sh); then
  # Without a registry the base is built with debootstrap; scripts/test-deps.sh installs it as root.
  if ! command -v debootstrap >/dev/null && [ -z "${CI:-}" ]; then
    echo "test:docker: skipped — no registry answers and debootstrap is missing to build the base image (as root: apt-get install debootstrap)"
    exit 0
  fi
  exit 1
fi
export RINGKV_IMAGE=${RINGKV_IMAGE:-ringkv:local}
log=$(mktemp)
docker build -q --network host --build-arg "BASE=$base" -t "$RINGKV_IMAGE" . >"$log" 2>&1 \
  || { echo "test:docker: docker build failed; its output ends:" >&2; tail -20 "$log" >&2; rm -f "$log"; exit 1; }
rm -f "$log"
# The previous release, for the upgrade test: move it forward when a release lands.
from=${RINGKV_UPGRADE_FROM:-efe8345b6911}
t1=$(date +%s)
if previous=$(scripts/release-image.sh "$from" "$base"); then
  export RINGKV_PREVIOUS_IMAGE=$previous
  echo "test:docker: previous release $from as $previous, ready in $(( $(date +%s) - t1 )) s"
fi
echo "test:docker: image $RINGKV_IMAGE on $base, $(docker image inspect "$RINGKV_IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}'), ready in $(( $(date +%s) - t0 )) s"
npx vitest run --config vitest.docker.config.ts "$@"
