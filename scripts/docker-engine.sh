#!/usr/bin/env bash
# A Docker engine for ringkv's container tests, on a machine that may have none running.
#
#   scripts/docker-engine.sh start   prints DOCKER_HOST=... for an engine that answers (the
#                                    one already running, or one it starts), then STARTED=1
#                                    when it started it, STARTED=0 when it was running
#   scripts/docker-engine.sh stop    stops the engine `start` started (by its PID), if any
#
# The engine it starts keeps everything under $RINGKV_DOCKER_DIR (/tmp/ringkv-docker):
# its data root (so images stay cached between runs), exec root, PID file and socket. It
# runs with --iptables=false --bridge=none: with its defaults dockerd sets the iptables
# FORWARD policy to DROP and adds a docker0 bridge, both of which outlive it and break
# the fault-injection harness's namespaces (test/jepsen). The tests use host networking
# or networks they create themselves, so neither is needed.
set -euo pipefail
dir=${RINGKV_DOCKER_DIR:-/tmp/ringkv-docker}
sock="$dir/docker.sock"
pidfile="$dir/dockerd.pid"

answers() { DOCKER_HOST="$1" timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

case "${1:-}" in
  start)
    if [ -n "${DOCKER_HOST:-}" ] && answers "$DOCKER_HOST"; then printf 'DOCKER_HOST=%s\nSTARTED=0\n' "$DOCKER_HOST"; exit 0; fi
    if [ -S /var/run/docker.sock ] && answers unix:///var/run/docker.sock; then printf 'DOCKER_HOST=unix:///var/run/docker.sock\nSTARTED=0\n'; exit 0; fi
    if [ -S "$sock" ] && answers "unix://$sock"; then printf 'DOCKER_HOST=unix://%s\nSTARTED=0\n' "$sock"; exit 0; fi
    command -v dockerd >/dev/null || { echo "no Docker engine runs and dockerd is not installed (apt-get install docker.io)" >&2; exit 2; }
    [ "$(id -u)" = 0 ] || { echo "no Docker engine runs, and starting dockerd needs root" >&2; exit 2; }
    mkdir -p "$dir/data" "$dir/exec"
    rm -f "$sock" "$pidfile"
    dockerd --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$pidfile" --host "unix://$sock" \
      --iptables=false --ip6tables=false --bridge=none >"$dir/dockerd.log" 2>&1 &
    for _ in $(seq 1 60); do
      if answers "unix://$sock"; then printf 'DOCKER_HOST=unix://%s\nSTARTED=1\n' "$sock"; exit 0; fi
      kill -0 $! 2>/dev/null || break
      sleep 0.5
    done
    echo "dockerd did not start; its log ($dir/dockerd.log) ends:" >&2
    tail -5 "$dir/dockerd.log" >&2
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    exit 2
    ;;
  stop)
    [ -f "$pidfile" ] || exit 0
    pid=$(cat "$pidfile")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 64
    ;;
esac
