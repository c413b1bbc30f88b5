#!/usr/bin/env bash
# Lighthouse's four scores of protocheck's page kinds (home, a failing run, a
# target, a rule), desktop and mobile, with Debian's Chromium. A measurement
# for the README, not part of the test suite: it runs the ignored test
# `a11y::lighthouse_scores_of_the_page_kinds`, which serves a sample site on
# loopback and runs the pinned Lighthouse (npm lighthouse@12.8.2, installed
# into $PROTOCHECK_CI_TOOLS) against it. Node 18.16 or later.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="${PROTOCHECK_CI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/protocheck-test-tools}"
cli="$tools/lighthouse/node_modules/lighthouse/cli/index.js"
if ! grep -q '"version": "12.8.2"' "$tools/lighthouse/node_modules/lighthouse/package.json" 2>/dev/null; then
  echo "== installing lighthouse 12.8.2 (npm)"
  rm -rf "$tools/lighthouse"
  mkdir -p "$tools/lighthouse"
  npm install -q --no-audit --no-fund --prefix "$tools/lighthouse" lighthouse@12.8.2
fi
PROTOCHECK_LIGHTHOUSE="$cli" cargo test --test it -- --ignored --nocapture \
  a11y::lighthouse_scores_of_the_page_kinds
