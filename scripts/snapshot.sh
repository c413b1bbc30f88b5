#!/usr/bin/env bash
# Snapshots of what protocheck shows its users, for refactors that must not
# change it: the OpenAPI document, the report schema, every command's --help,
# and the reports (JSON, SARIF, JUnit) of checks against the reference servers,
# correct and with a fault switched on. Run it before and after a change and
# diff the two folders:
#
#   scripts/snapshot.sh target/debug/protocheck /tmp/before
#   ... change ...
#   scripts/snapshot.sh target/debug/protocheck /tmp/after
#   diff -r /tmp/before /tmp/after
#
# What differs from run to run (times, durations, ports, ids, dates) is
# normalized away, so two runs of the same build give the same folder.
# Everything listens on loopback only.
set -euo pipefail
bin=$(realpath "${1:?usage: snapshot.sh PROTOCHECK_BINARY OUT_DIR}")
out=${2:?usage: snapshot.sh PROTOCHECK_BINARY OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
# Servers are started inside command substitutions, so their ids go to a file
# the cleanup reads, not to a variable of a subshell.
cleanup() {
  while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"
  rm -rf "$work"
}
: >"$work/pids"
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

# Times, durations, ports, UUIDs, HTTP dates and the probes' random nonces
# (hex) vary between runs.
normalize_json() {
  jq -S 'walk(
      if type == "object" then
        with_entries(select(.key | test("(_at|_ms|At|Ms|duration|elapsed|timestamp|startTimeUtc|endTimeUtc)$"; "i") | not))
      elif type == "string" then
        gsub("127\\.0\\.0\\.1:[0-9]+"; "127.0.0.1:PORT")
        | gsub("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"; "UUID")
        | gsub("[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT"; "DATE")
        | gsub("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"; "TIME")
        | gsub("[0-9]+ ?ms\\b"; "N ms")
        | gsub("\\b[0-9a-f]{8,}\\b"; "HEX")
      else . end)'
}
normalize_text() {
  sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
    -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/TIME/g' \
    -e 's/(time|timestamp)="[^"]*"/\1="T"/g' \
    -e 's/[0-9]+(\.[0-9]+)? ?(ms|s)\b/N\2/g' \
    -e 's/\b[0-9a-f]{8,}\b/HEX/g'
}

# The CLI: every command's help.
for cmd in "" serve worker migrate keys "keys create" "keys list" "keys revoke" check submit verify \
  reference "reference mcp" "reference rcp"; do
  name=$(echo "help $cmd" | tr ' ' '-')
  # shellcheck disable=SC2086
  "$bin" $cmd --help >"$out/$name.txt"
done

# The service: its OpenAPI document and report schema.
port=$(free_port)
DATABASE_URL="sqlite://$work/snap.db" "$bin" serve --bind "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
echo $! >>"$work/pids"
wait_port "$port"
curl -sf "http://127.0.0.1:$port/api/openapi.json" | jq -S . >"$out/openapi.json"
curl -sf "http://127.0.0.1:$port/api/v1/schema/report.json" | jq -S . >"$out/report-schema.json"

# Checks against the reference servers.
check() { # name, url, extra args...
  local name=$1 url=$2
  shift 2
  for format in json sarif; do
    "$bin" check "$url" --format "$format" "$@" 2>/dev/null | normalize_json >"$out/check-$name.$format" || true
  done
  "$bin" check "$url" --format junit "$@" 2>/dev/null | normalize_text >"$out/check-$name.junit.xml" || true
  "$bin" check "$url" --format text "$@" 2>/dev/null | normalize_text >"$out/check-$name.txt" || true
}
reference() { # kind, args...
  local kind=$1 p
  shift
  p=$(free_port)
  "$bin" reference "$kind" --port "$p" "$@" >"$work/ref-$p.log" 2>&1 &
  echo $! >>"$work/pids"
  wait_port "$p"
  echo "$p"
}
p=$(reference mcp)
check mcp "http://127.0.0.1:$p/mcp" --suite mcp
p=$(reference mcp --break MCP-ERR-002 --break MCP-HDR-001)
check mcp-broken "http://127.0.0.1:$p/mcp" --suite mcp
p=$(reference rcp)
check rcp "http://127.0.0.1:$p/rcp" --suite rcp
check rcp-reference-profile "http://127.0.0.1:$p/rcp" --suite rcp --profile reference
p=$(reference rcp --break RCP-L0-011)
check rcp-broken "http://127.0.0.1:$p/rcp" --suite rcp
echo "snapshot written to $out"
