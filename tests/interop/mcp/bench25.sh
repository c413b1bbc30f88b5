#!/usr/bin/env bash
# Wall time and peak memory of a full MCP 2025-11-25 run against
# server-everything, over Streamable HTTP and over stdio, beside the official
# conformance CLI's 2025-11-25 scenarios on the same server (HTTP: the CLI
# has no stdio mode):
#
#   tests/interop/mcp/bench25.sh [RUNS]
#
# RUNS (default 5) runs of each, one after another; the table gives the median
# wall time and the largest peak RSS (GNU time's %M) of each. Over stdio the
# server is protocheck's child, and GNU time's figure is the largest of the
# two processes (the server's, in practice). The binary and tools are found as
# scripts/bench-env.sh finds them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
runs="${1:-5}"
. "$repo/scripts/bench-env.sh"
[ -x "$node" ] && [ -f "$everything" ] || { echo "Node 22 and server-everything are needed (.ci/run installs them)" >&2; exit 2; }

pid=""; out=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$out" ]; then rm -f "$out"; fi
  pid=""; out=""
}
trap cleanup EXIT

start_http() {
  out="$(mktemp)"
  PORT=0 "$node" --require "$here/loopback.cjs" "$everything" streamableHttp >"$out" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 600); do
    port="$(awk '/^PORT /{print $2; exit}' "$out")"
    if [ -n "$port" ] && [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://127.0.0.1:$port/mcp" || true)" != "000" ]; then
      return 0
    fi
    sleep 0.1
  done
  echo "server-everything did not start" >&2; return 1
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# Runs "$@" RUNS times under GNU time; prints "median-seconds max-KiB last-output-line".
measure() {
  local times=() peak=0 stats line
  stats="$(mktemp)"
  for _ in $(seq 1 "$runs"); do
    line="$(/usr/bin/time -f '%e %M' -o "$stats" "$@" 2>/dev/null | tail -n 1 || true)"
    # GNU time writes "Command exited with non-zero status N" first when it did.
    read -r secs kib < <(tail -n 1 "$stats")
    times+=("$secs")
    if [ "$kib" -gt "$peak" ]; then peak="$kib"; fi
  done
  rm -f "$stats"
  printf '%s %s %s\n' "$(printf '%s\n' "${times[@]}" | median)" "$peak" "$line"
}

echo "protocheck: $bin ($kind build), $runs runs each, $(nproc) cores"
echo
echo "| run | median wall time (s) | peak RSS (MiB) | result |"
echo "|---|---|---|---|"
start_http
read -r med kib line < <(measure "$bin" check "http://127.0.0.1:$port/mcp" --suite mcp --mcp-revision 2025-11-25)
printf '| protocheck, HTTP | %s | %.1f | %s |\n' "$med" "$(echo "$kib / 1024" | bc -l)" "$line"
if [ -x "$conformance" ]; then
  read -r med kib line < <(measure env PATH="$(dirname "$node"):$PATH" "$conformance" server \
    --url "http://127.0.0.1:$port/mcp" --spec-version 2025-11-25)
  printf '| conformance CLI, HTTP (2025-11-25 scenarios) | %s | %.1f | %s |\n' "$med" "$(echo "$kib / 1024" | bc -l)" "$line"
fi
cleanup
read -r med kib line < <(measure "$bin" check --stdio "$node $everything stdio" --suite mcp --mcp-revision 2025-11-25)
printf '| protocheck, stdio | %s | %.1f | %s |\n' "$med" "$(echo "$kib / 1024" | bc -l)" "$line"
