#!/usr/bin/env bash
# Build evalkit's compiled ATIF extractor (native/atif: Rust, no dependencies, so it builds
# offline) into evalkit/load/steps/_evalkit_atif.so. Without a Rust toolchain evalkit works
# through its Python path (same frames, slower): this script then says so and exits 0,
# unless EVALKIT_REQUIRE_NATIVE=1 (CI) makes that an error.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO=$(command -v cargo 2>/dev/null || true)
[ -n "$CARGO" ] || { [ -x "$HOME/.cargo/bin/cargo" ] && CARGO="$HOME/.cargo/bin/cargo"; } || true
if [ -z "$CARGO" ]; then
  echo "build_native: cargo not found; evalkit will use its Python trajectory path" >&2
  [ "${EVALKIT_REQUIRE_NATIVE:-0}" = 1 ] && exit 1
  exit 0
fi
if ! "$CARGO" build --release --offline --quiet --manifest-path native/atif/Cargo.toml; then
  echo "build_native: the build failed (Rust too old?); evalkit will use its Python trajectory path" >&2
  rm -f evalkit/load/steps/_evalkit_atif.so  # never keep a stale library
  [ "${EVALKIT_REQUIRE_NATIVE:-0}" = 1 ] && exit 1
  exit 0
fi
if [ "${EVALKIT_REQUIRE_NATIVE:-0}" = 1 ]; then  # CI: the crate's own unit tests too
  "$CARGO" test --release --offline --quiet --manifest-path native/atif/Cargo.toml >&2
fi
cp native/atif/target/release/libevalkit_atif.so evalkit/load/steps/_evalkit_atif.so.tmp
mv evalkit/load/steps/_evalkit_atif.so.tmp evalkit/load/steps/_evalkit_atif.so
echo "build_native: evalkit/load/steps/_evalkit_atif.so built" >&2
