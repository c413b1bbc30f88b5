#!/usr/bin/env bash
# The public directory at scale: a stand-in MCP Registry of N servers (default
# 10,000), each remote on an origin of its own on loopback (127.0.x.y:9, where
# nothing listens, so each owner's opt-out file is asked and refused at once),
# synced into a fresh database, on SQLite and on Postgres:
#
#   scripts/bench-directory.sh [N] [REQUESTS]
#
# For each database it prints the first sync's wall time and peak RSS
# (/usr/bin/time -v), an incremental sync after 1 % of the entries changed
# and 0.1 % were deleted (its time and peak RSS, and how many entries it
# read), then serves the directory (`serve --workers 0`) and times REQUESTS
# (default 200) requests of each kind, one after another: the first page of
# /directory and of GET /api/v1/directory, a page sorted by grade, a name
# search, a filter, and a page deep in the list by its cursor; p50 and p95
# in milliseconds.
#
# The binary is $PROTOCHECK_BIN, else the release build under
# $CARGO_TARGET_DIR (or target/), else the debug build; the script says which.
# Postgres is $BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432),
# where it creates and drops a database; without a server there the Postgres
# half is skipped, saying so. Loopback only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
n="${1:-10000}"
requests="${2:-200}"
target="${CARGO_TARGET_DIR:-$repo/target}"
if [ -n "${PROTOCHECK_BIN:-}" ]; then
  bin="$PROTOCHECK_BIN"; kind="given"
elif [ -x "$target/release/protocheck" ]; then
  bin="$target/release/protocheck"; kind="release"
else
  bin="$target/debug/protocheck"; kind="debug"
fi
[ -x "$bin" ] || { echo "no protocheck binary at $bin (cargo build --release)" >&2; exit 2; }
pg="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_http() {
  for _ in $(seq 1 300); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "nothing answers at $1" >&2
  exit 1
}

# The registry's entries: a file for the first sync, and one where 1 % have a
# new version and 0.1 % are deleted, for the incremental sync.
python3 - "$n" "$work" <<'EOF'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
def item(i, version, status, at):
    return {
        "server": {"name": f"io.example.bench/server-{i:06d}",
                   "description": f"bench server {i}", "version": version,
                   "remotes": [{"type": "streamable-http",
                                "url": f"http://127.0.{i // 250}.{i % 250 + 1}:9/mcp"}]},
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "deprecated" if i % 10 == 3 else status, "isLatest": True,
            "publishedAt": at, "updatedAt": at}}}
def at(day, i):
    # Each entry its own second, as a registry's entries were each published
    # at a moment of their own.
    return f"2026-11-{day:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
first = [item(i, "1.0.0", "active", at(1 + i // 86400, i)) for i in range(n)]
json.dump(first, open(f"{work}/first.json", "w"))
later = []
for i in range(n):
    if i % 1000 == 500:
        later.append(item(i, "1.0.0", "deleted", at(28, i)))
    elif i % 100 == 50:
        later.append(item(i, "1.1.0", "active", at(28, i)))
    else:
        later.append(first[i])
json.dump(later, open(f"{work}/later.json", "w"))
EOF

# The registry keeps its port across restarts: a sync's high-water mark is
# kept per registry URL, so the second sync of the same URL is incremental.
registry_port=""
registry_pid=""
start_registry() {
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null && wait "$registry_pid" 2>/dev/null || true
  registry_pid=""
  [ -n "$registry_port" ] || registry_port="$(free_port)"
  "$bin" reference registry --port "$registry_port" --entries "$1" 2>/dev/null &
  registry_pid=$!
  pids+=("$registry_pid")
  wait_http "http://127.0.0.1:$registry_port/v0.1/servers?limit=1"
}

# `timed LABEL CMD…`: runs CMD under /usr/bin/time -v; prints its wall time,
# peak RSS and the command's own last line.
timed() {
  local label="$1"; shift
  /usr/bin/time -v "$@" > "$work/out" 2> "$work/time" || { cat "$work/out" "$work/time" >&2; exit 1; }
  local wall rss
  wall="$(grep 'Elapsed (wall clock)' "$work/time" | awk '{print $NF}')"
  rss="$(grep 'Maximum resident set size' "$work/time" | awk '{print $NF}')"
  printf '  %-18s %10s wall  %7.1f MiB peak RSS  %s\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(tail -n 1 "$work/out")"
}

latency() {
  local base="$1"
  python3 - "$base" "$requests" <<'EOF'
import http.client, json, sys, time, urllib.parse
base, count = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(u.hostname, u.port)
def get(path):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        raise SystemExit(f"{path}: HTTP {r.status}: {body[:200]!r}")
    return body
# A cursor 50 pages in (sorted by name, 50 a page).
path = "/api/v1/directory?limit=50"
for _ in range(50):
    nxt = json.loads(get(path))["links"]["next"]
    if not nxt:
        break
    path = nxt
deep = path
cases = [
    ("page /directory", "/directory"),
    ("API first page", "/api/v1/directory"),
    ("API sort=grade desc", "/api/v1/directory?sort=grade&order=desc"),
    ("API sort=judged", "/api/v1/directory?sort=judged"),
    ("API q=server-0099", "/api/v1/directory?q=server-0099"),
    ("API status filter+sort", "/api/v1/directory?transport=streamable-http&sort=status"),
    ("API page 51 (cursor)", deep),
    ("page 51 (cursor)", deep.replace("/api/v1/directory", "/directory")),
]
for label, path in cases:
    get(path)
    times = []
    for _ in range(count):
        t = time.perf_counter()
        get(path)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    p50 = times[len(times) // 2]
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"  {label:24s} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
EOF
}

# The plans of three page queries as the store writes them: no sort step,
# an index walked in order.
plans() {
  local name="$1" url="$2"
  local cols="url, grade, judged_at_ms"
  local queries=(
    "SELECT $cols FROM directory_entries ORDER BY name_key ASC, url ASC LIMIT 51"
    "SELECT $cols FROM directory_entries WHERE (grade_rank, url) < (2, 'http://127.0.20.1:9/mcp') ORDER BY grade_rank DESC, url DESC LIMIT 51"
    "SELECT $cols FROM directory_entries WHERE grade_rank = 0 AND (name_key, url) > ('io.example.bench/server-005000', '') ORDER BY name_key ASC, url ASC LIMIT 51"
  )
  for q in "${queries[@]}"; do
    if [ "$name" = SQLite ]; then
      echo "  plan: $(sqlite3 "${url#sqlite://}" "EXPLAIN QUERY PLAN $q" | tr '\n' ' ')"
    else
      echo "  plan: $(psql "$url" -qAtc "EXPLAIN $q" | tr '\n' ' ' | cut -c1-200)"
    fi
  done
}

bench() {
  local name="$1" url="$2"
  echo "== $name ($kind build, $n servers)"
  registry_port=""
  start_registry "$work/first.json"
  timed "first sync" "$bin" registry sync --database-url "$url" \
    --registry "http://127.0.0.1:$registry_port" --allow-private-targets 1 \
    --public-url https://protocheck.bench
  plans "$name" "$url"
  start_registry "$work/later.json"
  timed "incremental sync" "$bin" registry sync --database-url "$url" \
    --registry "http://127.0.0.1:$registry_port" --allow-private-targets 1 \
    --public-url https://protocheck.bench
  local port
  port="$(free_port)"
  DATABASE_URL="$url" "$bin" serve --bind "127.0.0.1:$port" --workers 0 >/dev/null 2>&1 &
  local serve_pid=$!
  pids+=("$serve_pid")
  wait_http "http://127.0.0.1:$port/healthz"
  latency "http://127.0.0.1:$port"
  kill "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" 2>/dev/null || true
}

bench "SQLite" "sqlite://$work/bench.db"
if psql "$pg/postgres" -qAtc 'select 1' >/dev/null 2>&1; then
  db="protocheck_bench_directory_$$"
  psql "$pg/postgres" -qc "CREATE DATABASE \"$db\"" >/dev/null
  trap 'psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; cleanup' EXIT
  bench "Postgres" "$pg/$db"
else
  echo "== Postgres: SKIPPED, nothing answers at $pg"
fi
