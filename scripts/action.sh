#!/usr/bin/env bash
# The steps of the protocheck GitHub Action (action.yml), as one script so
# that `.ci/run` exercises exactly what a runner does (scripts/test-action.sh).
#
# Reads the action's inputs from INPUT_* variables, as action.yml passes them;
# GITHUB_ACTION_PATH is the action's checkout, GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY the files GitHub reads the outputs and the summary from.
#
# 1. Install protocheck from the action's checkout into
#    $PROTOCHECK_ACTION_HOME (~/.protocheck-action, which action.yml caches),
#    unless a build is there already. PROTOCHECK_ACTION_DEBUG=1 builds a debug
#    binary (tests: a release build takes minutes).
# 2. Run `protocheck check` (or `submit --wait` with a server and an API key)
#    with --github, which writes the outputs and the summary; exit with its
#    status: 0 passes, 1 fails the gate or the verdict, 2 no verdict.
set -euo pipefail

action_path="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH must name the action checkout}"
home="${PROTOCHECK_ACTION_HOME:-$HOME/.protocheck-action}"
bin="$home/bin/protocheck"

fail() {
  echo "::error title=protocheck::$*" >&2
  exit 2
}

if [ -x "$bin" ]; then
  echo "protocheck: using the cached build $("$bin" --version)"
else
  command -v cargo >/dev/null || fail "cargo is needed to build protocheck (the GitHub-hosted runners have it)"
  profile=()
  if [ "${PROTOCHECK_ACTION_DEBUG:-0}" = 1 ]; then profile=(--debug); fi
  echo "protocheck: building from $action_path (cached for later runs)"
  cargo install --locked --quiet "${profile[@]}" --path "$action_path" --root "$home"
fi

url="${INPUT_URL:-}"
stdio="${INPUT_STDIO:-}"
suite="${INPUT_SUITE:-auto}"
format="${INPUT_FORMAT:-sarif}"
case "$format" in
  sarif | junit | json | text) ;;
  *) fail "format must be sarif, junit, json or text, not '$format'" ;;
esac
output="${INPUT_OUTPUT:-}"
if [ -z "$output" ]; then
  case "$format" in
    junit) output="protocheck.xml" ;;
    text) output="protocheck.txt" ;;
    *) output="protocheck.$format" ;;
  esac
fi
mkdir -p "$(dirname "$output")"
if [ -n "$url" ] && [ -n "$stdio" ]; then fail "give url or stdio, not both"; fi
if [ -z "$url" ] && [ -z "$stdio" ]; then fail "give url (the server's URL) or stdio (a command)"; fi

args=(--suite "$suite" --format "$format" --output "$output" --github)
if [ -n "${INPUT_MIN_GRADE:-}" ]; then args+=(--min-grade "$INPUT_MIN_GRADE"); fi
if [ -n "${INPUT_MIN_LEVEL:-}" ]; then args+=(--min-level "$INPUT_MIN_LEVEL"); fi
if [ -n "${INPUT_EXPECTED_FAILURES:-}" ]; then
  args+=(--expected-failures "$INPUT_EXPECTED_FAILURES")
fi
if [ -n "${INPUT_PROFILE:-}" ]; then args+=(--profile "$INPUT_PROFILE"); fi
# `check` and `submit` take the revision alike: a hosted protocheck judges the
# one asked for as a local check does.
if [ -n "${INPUT_MCP_REVISION:-}" ]; then args+=(--mcp-revision "$INPUT_MCP_REVISION"); fi

status=0
if [ -n "${INPUT_SERVER:-}" ]; then
  [ -n "$url" ] || fail "a hosted protocheck needs url (it cannot start a stdio server)"
  [ -n "${PROTOCHECK_API_KEY:-}" ] || fail "server needs api-key"
  # The key stays in the environment (PROTOCHECK_API_KEY), never on the command line.
  "$bin" submit "$url" --server "$INPUT_SERVER" --wait "${args[@]}" || status=$?
else
  if [ -n "$stdio" ]; then
    "$bin" check --stdio "$stdio" "${args[@]}" || status=$?
  else
    "$bin" check "$url" "${args[@]}" || status=$?
  fi
fi
exit "$status"
