# Sourced by the benchmark scripts (scripts/bench-latency.sh,
# tests/interop/mcp/bench.sh, tests/interop/mcp/bench25.sh) once they have
# set $repo: where the protocheck binary and the pinned peers are.
#
# The binary is $PROTOCHECK_BIN, else the release build under
# $CARGO_TARGET_DIR (or target/), else the debug build; $kind says which.
# The peers are those .ci/run installs under $PROTOCHECK_CI_TOOLS
# (/work/ci-tools), each overridable by its own variable.
tools="${PROTOCHECK_CI_TOOLS:-/work/ci-tools}"
python="${PROTOCHECK_INTEROP_PYTHON:-$tools/interop-mcp-sdk-venv/bin/python}"
fastmcp_python="${PROTOCHECK_INTEROP_FASTMCP_PYTHON:-$tools/interop-fastmcp-venv/bin/python}"
node="${PROTOCHECK_INTEROP_NODE:-$tools/node22/node_modules/node/bin/node}"
everything="${PROTOCHECK_INTEROP_EVERYTHING:-$tools/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js}"
conformance="${PROTOCHECK_INTEROP_CONFORMANCE:-$tools/mcp-everything/node_modules/.bin/conformance}"
target="${CARGO_TARGET_DIR:-$repo/target}"
if [ -n "${PROTOCHECK_BIN:-}" ]; then
  bin="$PROTOCHECK_BIN"; kind="given"
elif [ -x "$target/release/protocheck" ]; then
  bin="$target/release/protocheck"; kind="release"
else
  bin="$target/debug/protocheck"; kind="debug"
fi
[ -x "$bin" ] || { echo "no protocheck binary at $bin (cargo build --release)" >&2; exit 2; }
# Read by the scripts that source this file.
export tools python fastmcp_python node everything conformance target bin kind
