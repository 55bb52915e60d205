#!/usr/bin/env bash
# Set up (scripts/setup.sh) and render the nightly report from the bundled runs/ into reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
RUNS="${1:-runs}"
OUT="${2:-reports}"
if .venv/bin/evalkit report --help >/dev/null 2>&1; then
  exec .venv/bin/evalkit report nightly --runs "$RUNS" --out "$OUT"
fi
# until the report command exists: the table of runs
exec .venv/bin/evalkit list "$RUNS"
