#!/usr/bin/env bash
# The MCP interop panel's verdicts and timings:
#
#   tests/interop/mcp/bench.sh [RUNS] [SERVER...]
#
# For each panel server (default: all rows of tests/interop/EXPECTED.md's MCP
# table), starts it on an ephemeral loopback port, runs
# `protocheck check URL --suite mcp --mcp-revision 2026-07-28 --format json` RUNS times (default 5)
# one after another, and prints the grade, the failing and warning rules, the
# median wall time and the CPU time the server process spent per run (what
# the run cost the server: no checker can be faster than that on a
# single-threaded server). Then, when the official conformance CLI is installed,
# runs it once per RUNS on the SDK server (stateless, JSON) for comparison, and
# says how many times faster protocheck's median was on that server when the
# panel included it. The timings of a full check against the official Python
# SDK, stateless and stateful, beside the CLI's:
#
#   tests/interop/mcp/bench.sh 5 sdk-stateless-json sdk-stateful
#
# The binary is $PROTOCHECK_BIN, else the release build under
# $CARGO_TARGET_DIR (or target/), else the debug build; the script says which.
# The tools are those .ci/run installs (PROTOCHECK_INTEROP_PYTHON,
# PROTOCHECK_INTEROP_FASTMCP_PYTHON, PROTOCHECK_INTEROP_NODE, PROTOCHECK_INTEROP_EVERYTHING,
# PROTOCHECK_INTEROP_CONFORMANCE); the defaults are their places under
# /work/ci-tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
runs="${1:-5}"
export PYTHONDONTWRITEBYTECODE=1
shift || true

. "$repo/scripts/bench-env.sh"

if [ $# -eq 0 ]; then
  # The rows of the MCP table, in order.
  set -- $(awk '/^## MCP/{m=1;next} /^## /{m=0} m && /^\| `?[a-z]/ && !/^\| server/ {gsub(/[|` ]/,"",$2); print $2}' \
    FS='|' OFS='|' "$repo/tests/interop/EXPECTED.md")
fi

# Runs in the background job itself (exec), so that killing the job's pid
# stops the server and none outlives the script.
launch() {
  case "$1" in
    sdk-*) exec "$python" "$here/sdk_server.py" "${1#sdk-}" 0 ;;
    fastmcp) exec "$fastmcp_python" "$here/fastmcp_server.py" 0 ;;
    fastmcp-default-origin) exec "$fastmcp_python" "$here/fastmcp_server.py" --default-origin 0 ;;
    everything) PORT=0 exec "$node" --require "$here/loopback.cjs" "$everything" streamableHttp ;;
    everything-sse) PORT=0 exec "$node" --require "$here/loopback.cjs" "$everything" sse ;;
    spec-*) exec "$python" "$here/spec/variants.py" "${1#spec-}" 0 ;;
    *) echo "unknown panel server $1" >&2; return 2 ;;
  esac
}

# The 2024-11-05 HTTP+SSE servers are given their one URL, /sse.
endpoint_path() {
  case "$1" in
    sdk-legacy-sse|everything-sse) echo /sse ;;
    *) echo /mcp ;;
  esac
}

pid=""
out=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$out" ]; then rm -f "$out"; fi
}
trap cleanup EXIT

# Starts $1 in the background; sets pid and port.
start() {
  out="$(mktemp)"
  launch "$1" >"$out" 2>/dev/null &
  pid=$!
  port=""
  for _ in $(seq 1 600); do
    port="$(awk '/^PORT /{print $2; exit}' "$out")"
    # Any HTTP answer will do (a GET may open a stream that never ends).
    if [ -n "$port" ] && [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://127.0.0.1:$port/mcp" || true)" != "000" ]; then
      return 0
    fi
    sleep 0.1
  done
  echo "$1 did not start" >&2
  return 1
}

# The CPU time (user + system, ms) the server process has used so far: what
# a run costs the server, whoever sends the requests.
hz="$(getconf CLK_TCK)"
server_cpu_ms() { awk -v hz="$hz" '{printf "%d\n", ($14 + $15) * 1000 / hz}' "/proc/$pid/stat"; }

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }

echo "protocheck: $bin ($kind build), $runs runs per server, $(nproc) cores"
echo
echo "| server | grade | fail | warn | median wall time (s) | min–max (s) | server CPU per run (ms) |"
echo "|---|---|---|---|---|---|---|"
sdk_median=""
sdk_cpu=""
for name in "$@"; do
  start "$name"
  times=()
  report=""
  cpu0="$(server_cpu_ms)"
  for _ in $(seq 1 "$runs"); do
    t0=$(now)
    report="$("$bin" check "http://127.0.0.1:$port$(endpoint_path "$name")" --suite mcp --mcp-revision 2026-07-28 --format json 2>/dev/null || true)"
    t1=$(now)
    times+=("$(echo "$t1 - $t0" | bc -l)")
  done
  summary="$(printf '%s' "$report" | "$python" -c '
import json, sys
d = json.load(sys.stdin)
by = lambda o: ", ".join(sorted(f["rule_id"] for f in d["findings"] if f["outcome"] == o)) or "—"
print("%s | %s | %s" % (d["verdict"]["grade"], by("fail"), by("warn")))')"
  med="$(printf '%s\n' "${times[@]}" | median)"
  lo="$(printf '%s\n' "${times[@]}" | sort -n | head -n 1)"
  hi="$(printf '%s\n' "${times[@]}" | sort -n | tail -n 1)"
  cpu=$(( ($(server_cpu_ms) - cpu0) / runs ))
  printf '| %s | %s | %.3f | %.3f–%.3f | %d |\n' "$name" "$summary" "$med" "$lo" "$hi" "$cpu"
  if [ "$name" = sdk-stateless-json ]; then sdk_median="$med"; sdk_cpu="$cpu"; fi
  cleanup; pid=""; out=""
done

if [ -x "$conformance" ] && [ -x "$node" ]; then
  echo
  start sdk-stateless-json
  times=()
  line=""
  cpu0="$(server_cpu_ms)"
  for _ in $(seq 1 "$runs"); do
    t0=$(now)
    line="$(PATH="$(dirname "$node"):$PATH" "$conformance" server --url "http://127.0.0.1:$port/mcp" \
      --spec-version 2026-07-28 2>&1 | grep -E 'Passed:|passed|failed' | tail -n 1 || true)"
    t1=$(now)
    times+=("$(echo "$t1 - $t0" | bc -l)")
  done
  med="$(printf '%s\n' "${times[@]}" | median)"
  cpu=$(( ($(server_cpu_ms) - cpu0) / runs ))
  echo "conformance $("$node" "$conformance" --version 2>/dev/null || echo '?') --spec-version 2026-07-28 on sdk-stateless-json: ${line:-no summary line}; median wall time $(printf '%.2f' "$med") s; server CPU per run $cpu ms"
  if [ -n "$sdk_median" ]; then
    echo "protocheck on sdk-stateless-json: median $(printf '%.3f' "$sdk_median") s, $(echo "$med / $sdk_median" | bc -l | xargs printf '%.1f')× faster than the conformance CLI"
    echo "20× faster than the CLI would be $(echo "$med * 1000 / 20" | bc -l | xargs printf '%.0f') ms; the server itself spent ${sdk_cpu} ms of CPU per protocheck run"
  fi
  cleanup; pid=""; out=""
else
  echo
  echo "(the official conformance CLI is not installed; .ci/run's install_interop_mcp installs it)"
fi
