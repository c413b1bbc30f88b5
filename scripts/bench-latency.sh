#!/usr/bin/env bash
# Whole runs across a network: `protocheck check` against the reference
# servers with every answer delayed (`--latency-ms`), for MCP 2026-07-28,
# MCP 2025-11-25 and RCP/1 over HTTP, beside the official conformance CLI at
# 100 ms where it applies (the two MCP revisions):
#
#   scripts/bench-latency.sh [RUNS] [LATENCIES]
#
# RUNS (default 3) runs of each cell, one after another; LATENCIES (default
# "0 50 100 200", milliseconds). The table gives each cell's median wall time
# and the run's sequential round trips: the slope of wall time against
# latency between the smallest and largest non-zero latency (a run that needs
# N round trips one after another takes N × latency longer when every
# answer is delayed by latency), next to the verdict. The requests in flight
# are the default (`check --concurrency`), or $BENCH_CONCURRENCY.
#
# The binary is $PROTOCHECK_BIN, else the release build under
# $CARGO_TARGET_DIR (or target/), else the debug build; the script says which.
# The CLI is $PROTOCHECK_INTEROP_CONFORMANCE run with $PROTOCHECK_INTEROP_NODE
# (.ci/run installs both under /work/ci-tools). Loopback only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
runs="${1:-3}"
latencies="${2:-0 50 100 200}"
. "$repo/scripts/bench-env.sh"
concurrency=()
if [ -n "${BENCH_CONCURRENCY:-}" ]; then concurrency=(--concurrency "$BENCH_CONCURRENCY"); fi

# `start` runs in a command substitution (a subshell), so the servers' pids
# go to a file the cleanup reads, not to a variable the subshell would keep.
pidfile="$(mktemp)"
stop_servers() {
  while read -r p; do kill "$p" 2>/dev/null || true; done < "$pidfile"
  : > "$pidfile"
}
trap 'stop_servers; rm -f "$pidfile"' EXIT

# A free loopback port: bound, read and released (the server binds it again
# at once; nothing else on the machine asks for ports in this range by name).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# start NAME LATENCY ARGS...: starts `protocheck reference ARGS --port P
# --latency-ms LATENCY`, waits for it to answer, and prints its URL.
start() {
  local path="$1" latency="$2" port
  shift 2
  port="$(free_port)"
  "$bin" reference "$@" --port "$port" --latency-ms "$latency" >/dev/null 2>&1 &
  echo "$!" >> "$pidfile"
  for _ in $(seq 1 300); do
    if [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://127.0.0.1:$port$path" || true)" != "000" ]; then
      echo "http://127.0.0.1:$port$path"; return 0
    fi
    sleep 0.1
  done
  echo "the reference server ($*) did not start" >&2; return 1
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# measure URL SUITE [ARGS...]: prints "median-seconds verdict" of RUNS runs;
# the verdict is every run's grade or level, one word when they agree.
measure() {
  local url="$1" suite="$2" times=() verdicts=() out start end
  shift 2
  for _ in $(seq 1 "$runs"); do
    start="$(date +%s.%N)"
    out="$("$bin" check "$url" --suite "$suite" "$@" "${concurrency[@]}" --json 2>/dev/null || true)"
    end="$(date +%s.%N)"
    times+=("$(echo "$end - $start" | bc -l)")
    verdicts+=("$(printf '%s' "$out" | python3 -c 'import json,sys
try:
    v = json.load(sys.stdin).get("verdict") or {}
    print(v.get("summary") or "?")
except Exception:
    print("error")')")
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | median)" "$(printf '%s\n' "${verdicts[@]}" | sort -u | paste -sd/)"
}

echo "protocheck: $bin ($kind build), $runs runs per cell, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), ${BENCH_CONCURRENCY:-default} in flight"
echo
header="| run |"; rule="|---|"
for l in $latencies; do header+=" ${l} ms |"; rule+="---|"; done
echo "$header round trips | verdict |"
echo "$rule---|---|"
declare -A cli=()
for row in "MCP 2026-07-28|/mcp|mcp|mcp|" "MCP 2025-11-25|/mcp|mcp --revision 2025-11-25|mcp|--mcp-revision 2025-11-25" "RCP/1|/rcp|rcp|rcp|"; do
  IFS='|' read -r name path server suite extra <<<"$row"
  line="| $name |"; declare -A at=(); verdict=""
  for l in $latencies; do
    # shellcheck disable=SC2086 # $server and $extra are word lists
    url="$(start "$path" "$l" $server)"
    # shellcheck disable=SC2086
    read -r med v < <(measure "$url" "$suite" $extra)
    at[$l]="$med"; verdict="$v"
    line+=" $(printf '%.2f' "$med") s |"
    if [ "$l" = 100 ] && [ "$suite" = mcp ] && [ -x "$conformance" ] && [ -x "$node" ]; then
      spec="${extra#--mcp-revision }"; spec="${spec:-2026-07-28}"
      start_s="$(date +%s.%N)"
      summary="$(PATH="$(dirname "$node"):$PATH" "$conformance" server --url "$url" --spec-version "$spec" 2>&1 | tail -n 1 || true)"
      end_s="$(date +%s.%N)"
      cli[$name]="$(printf '%.2f' "$(echo "$end_s - $start_s" | bc -l)") s ($summary)"
    fi
    stop_servers
  done
  lo=""; hi=""
  for l in $latencies; do
    if [ "$l" != 0 ]; then [ -z "$lo" ] && lo="$l"; hi="$l"; fi
  done
  if [ -n "$lo" ] && [ "$lo" != "$hi" ]; then
    trips="$(echo "(${at[$hi]} - ${at[$lo]}) * 1000 / ($hi - $lo)" | bc -l)"
    line+=" $(printf '%.1f' "$trips") |"
  else
    line+=" — |"
  fi
  echo "$line $verdict |"
done
if [ "${#cli[@]}" -gt 0 ]; then
  echo
  echo "The official conformance CLI at 100 ms, once each ($("$node" "$conformance" --version 2>/dev/null || echo '?')):"
  for name in "${!cli[@]}"; do echo "- $name: ${cli[$name]}"; done
elif [ ! -x "$conformance" ]; then
  echo
  echo "(the official conformance CLI is not installed; .ci/run installs it)"
fi
