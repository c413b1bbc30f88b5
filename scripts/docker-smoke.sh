#!/usr/bin/env bash
# Builds the Docker image and brings docker-compose.yml up, then checks what a
# new operator would: every long-running service is up, those with a health
# check are healthy (Postgres, the web service), the worker runs with none to
# report, the migration exited 0, the service answers /readyz on the host and
# publishes exactly one signing key (every container signs with the one key
# the environment gives). Not part of CI: the build alone takes about 15
# minutes on 2 cores, and it needs a Docker engine with the compose plugin.
#
#   scripts/docker-smoke.sh            # build, up, check, then down -v
#   KEEP=1 scripts/docker-smoke.sh     # leave the stack running
#
# PROTOCHECK_SIGNING_KEY is made for the test (64 hex digits) unless set;
# PROTOCHECK_PORT (default 18080) is the host port of the web service;
# SMOKE_TIMEOUT (default 300) is the seconds to wait for health after `up`.
set -euo pipefail
cd "$(dirname "$0")/.."

export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-protocheck-smoke}"
export PROTOCHECK_PORT="${PROTOCHECK_PORT:-18080}"
if [ -z "${PROTOCHECK_SIGNING_KEY:-}" ]; then
  PROTOCHECK_SIGNING_KEY=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  export PROTOCHECK_SIGNING_KEY
fi
timeout_s="${SMOKE_TIMEOUT:-300}"

log() { printf '\n== %s\n' "$*"; }
compose() { docker compose "$@"; }

cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    log "failed; the services' last logs"
    compose logs --tail 40 || true
  fi
  if [ -z "${KEEP:-}" ]; then
    log "docker compose down -v"
    compose down -v --remove-orphans || true
  fi
  exit "$status"
}
trap cleanup EXIT

# state SERVICE: "STATUS HEALTH EXITCODE" of its container (HEALTH "-" when
# it has no health check).
state() {
  local id
  id=$(compose ps -a -q "$1")
  [ -n "$id" ] || { echo "absent - -"; return; }
  docker inspect --format \
    '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}-{{end}} {{.State.ExitCode}}' \
    "$id"
}

log "docker compose build"
time compose build
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep "^${COMPOSE_PROJECT_NAME}" || true

log "docker compose up -d"
compose up -d

log "waiting up to ${timeout_s} s for every service"
deadline=$((SECONDS + timeout_s))
while :; do
  pg=$(state postgres) web=$(state protocheck) worker=$(state worker) migrate=$(state migrate)
  if [ "$pg" = "running healthy 0" ] && [ "$web" = "running healthy 0" ] &&
     [ "$worker" = "running - 0" ] && [ "$migrate" = "exited - 0" ]; then
    break
  fi
  case "$migrate" in exited\ *\ [1-9]*) echo "migrate failed: $migrate" >&2; exit 1 ;; esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "not ready after ${timeout_s} s: postgres [$pg] protocheck [$web] worker [$worker] migrate [$migrate]" >&2
    exit 1
  fi
  sleep 5
done
compose ps -a

log "the service from the host"
curl -fsS "http://127.0.0.1:${PROTOCHECK_PORT}/readyz"
echo
keys=$(curl -fsS "http://127.0.0.1:${PROTOCHECK_PORT}/.well-known/protocheck/keys.json")
count=$(printf '%s' "$keys" | grep -o '"kid"' | wc -l)
if [ "$count" -ne 1 ]; then
  echo "expected one published signing key, got $count: $keys" >&2
  exit 1
fi
echo "one signing key published"

log "restart policies"
for service in postgres protocheck worker; do
  policy=$(docker inspect --format '{{.HostConfig.RestartPolicy.Name}}' "$(compose ps -q "$service")")
  [ "$policy" = "unless-stopped" ] || { echo "$service restarts: $policy" >&2; exit 1; }
done
echo "postgres, protocheck and worker: unless-stopped"

log "docker smoke test passed"
