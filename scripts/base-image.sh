#!/usr/bin/env bash
# Print the base image the Dockerfile should build FROM (its BASE build argument).
#
# Normally that is node:20-bookworm-slim, pulled from Docker Hub. Where no registry can
# be reached (an air-gapped CI machine, this project's build machines), it builds a
# stand-in once and prints its name instead: Debian bookworm (debootstrap
# --variant=minbase, from deb.debian.org or $RINGKV_DEBIAN_MIRROR) with this machine's Node.js and npm
# copied in, and this machine's CA trust store, so that `npm ci` inside the build trusts
# the TLS proxy this machine reaches the npm registry through. The stand-in is cached
# under its name (ringkv-base:node<version>-bookworm) and rebuilt only when missing;
# `docker image rm` that name to drop it.
#
# Needs DOCKER_HOST (scripts/docker-engine.sh start), and root plus debootstrap to build
# the stand-in.
set -euo pipefail
official=node:20-bookworm-slim
node_version=$(node --version | sed 's/^v//')
standin="ringkv-base:node${node_version}-bookworm"
say() { echo "base-image: $*" >&2; }

if docker image inspect "$official" >/dev/null 2>&1; then echo "$official"; exit 0; fi
if timeout 60 docker pull -q "$official" >/dev/null 2>&1; then echo "$official"; exit 0; fi
if docker image inspect "$standin" >/dev/null 2>&1; then echo "$standin"; exit 0; fi

say "$official cannot be pulled here; building $standin from Debian packages and this machine's Node.js $node_version"
command -v debootstrap >/dev/null || { say "debootstrap is missing (apt-get install debootstrap)"; exit 2; }
case "$node_version" in 20.*) ;; *) say "this machine's Node.js is $node_version; the image wants 20"; exit 2 ;; esac
mirror=${RINGKV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/ringkv-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
started=$(date +%s)
# passwd: the Dockerfile adds its user with groupadd/useradd, which minbase lacks.
debootstrap --variant=minbase --include=passwd,ca-certificates bookworm "$root" "$mirror" >"$root.log" 2>&1 \
  || { say "debootstrap failed; its log ($root.log) ends:"; tail -5 "$root.log" >&2; exit 2; }
rm -f "$root.log"
node_bin=$(command -v node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# This machine's trust store (its npm registry proxy's CA is in it), and npm told to use it.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\nfund=false\naudit=false\n' >"$root/usr/local/etc/npmrc"
# What an image import would not bring: a smaller tree (no apt lists, docs, caches).
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  --message "ringkv stand-in for $official: Debian bookworm minbase + Node.js $node_version" \
  - "$standin" >/dev/null
say "built $standin in $(( $(date +%s) - started )) s"
echo "$standin"
