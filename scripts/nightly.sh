#!/usr/bin/env bash
# Set up (scripts/setup.sh) and render the nightly report from the bundled runs/ into reports/.
# Prints the report's path (reports/<date>-nightly.html; the executed notebook and
# summary.json are next to it). Extra arguments after RUNS and OUT go to `evalkit report`
# (e.g. -p candidate RUN -p baseline RUN).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
RUNS="${1:-runs}"
OUT="${2:-reports}"
shift $(( $# > 2 ? 2 : $# ))
exec .venv/bin/evalkit report nightly --runs "$RUNS" --out "$OUT" "$@"
