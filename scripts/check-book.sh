#!/usr/bin/env bash
# Builds the book (docs/, mdBook) and checks its links, as `.ci/run` does: every
# link from one page or file of the book to another must resolve, and so must
# every #anchor, in the built HTML and in README.md (whose links point into
# docs/src). No request leaves the machine: lychee runs --offline, so links to
# other sites are listed as excluded, never fetched.
#
# mdBook and lychee are pinned and installed with `cargo install --locked` into
# the tools cache, $PROTOCHECK_CI_TOOLS (by default
# ~/.cache/protocheck-test-tools, as in scripts/test-all.sh), the first time;
# later runs reuse them. The build goes to $PROTOCHECK_BOOK_TARGET_DIR (.ci/run:
# /work/target-book), else to a temporary directory, so it does not share a
# target directory with protocheck's own builds. lychee, a link checker that
# resolves local files and fragments offline, is used rather than
# mdbook-linkcheck, whose last release (0.7.7) is built for mdBook 0.4.
set -euo pipefail
# A failed install inside $(tool …) stops the script too.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
export PROTOCHECK_CI_TOOLS="${PROTOCHECK_CI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/protocheck-test-tools}"

MDBOOK_VERSION=0.5.4
LYCHEE_VERSION=0.24.2

log() { printf '\n== %s\n' "$*"; }

# tool CRATE VERSION BINARY [cargo install flags…]: prints the binary's path.
tool() {
  local crate=$1 version=$2 binary=$3
  shift 3
  local root="$PROTOCHECK_CI_TOOLS/$crate-$version"
  if ! "$root/bin/$binary" --version 2>/dev/null | grep -qF "$version"; then
    log "installing $crate $version (crates.io) into $root" >&2
    local target="${PROTOCHECK_BOOK_TARGET_DIR:-}" scratch=""
    if [ -z "$target" ]; then
      scratch=$(mktemp -d)
      target=$scratch
    fi
    rm -rf "$root"
    CARGO_TARGET_DIR="$target" cargo install --locked "$crate" --version "$version" \
      --root "$root" "$@" >&2
    [ -z "$scratch" ] || rm -rf "$scratch"
  fi
  echo "$root/bin/$binary"
}

# The book needs no `mdbook serve` or `watch`: their features stay out of the build.
mdbook=$(tool mdbook "$MDBOOK_VERSION" mdbook --no-default-features --features search)
# No e-mail checks (the default feature): nothing here is checked over the network.
lychee=$(tool lychee "$LYCHEE_VERSION" lychee --no-default-features)

log "mdbook build docs ($("$mdbook" --version))"
rm -rf docs/book
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$mdbook" build docs 2>&1 | tee "$out"
# A warning is an error: mdBook warns, for one, of text it would drop as an
# unclosed HTML tag (write `\<name>` for a literal `<name>` outside code).
if grep -q ' WARN ' "$out"; then
  echo "check-book: mdbook build warned (above)" >&2
  exit 1
fi

log "links of the book and of README.md ($("$lychee" --version), offline)"
# --root-dir resolves the root-relative links of 404.html (`/`) in the book.
"$lychee" --offline --include-fragments --no-progress --root-dir "$PWD/docs/book" \
  docs/book README.md
