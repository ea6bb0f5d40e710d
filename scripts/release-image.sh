#!/usr/bin/env bash
# Print the name of the image of an earlier commit, building it first if it is not cached:
#
#   scripts/release-image.sh <commit> <base>
#
# The container suite's upgrade test (test/docker/upgrade.docker.ts) runs a cluster of
# that image and replaces its nodes one at a time by the current one. The image is built
# from the commit's own tree (git archive: the work tree and its changes play no part) on
# <base> (scripts/base-image.sh), tagged ringkv:<first 12 hex digits>, and kept between
# runs; `docker image rm` it to drop it. Exits 3, saying why, when the commit is not in
# this clone (a shallow one, say).
set -euo pipefail
cd "$(dirname "$0")/.."
ref=$1
base=$2
sha=$(git rev-parse --verify -q "$ref^{commit}") || { echo "release-image: $ref is not a commit in this clone (git fetch --unshallow to get it)" >&2; exit 3; }
image="ringkv:${sha:0:12}"
if docker image inspect "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi
src=$(mktemp -d /tmp/ringkv-release.XXXXXX)
trap 'rm -rf "$src"' EXIT
git archive "$sha" | tar -x -C "$src"
docker build -q --network host --build-arg "BASE=$base" -t "$image" "$src" >"$src/.build.log" 2>&1 \
  || { echo "release-image: docker build of $sha failed; its output ends:" >&2; tail -5 "$src/.build.log" >&2; exit 1; }
echo "$image"
