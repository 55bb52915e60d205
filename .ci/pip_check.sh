#!/usr/bin/env bash
# `pip install -e .` into a fresh venv of the machine's Python (3.11+) gives a working evalkit:
# the CLI answers and the package loads the repository's runs/. Writes only $WORK/pip-venv.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${EVALKIT_CI_WORK:-$ROOT/.ci/work}
PY=${EVALKIT_PYTHON:-$("$ROOT/.venv/bin/python" -c 'import sys; print(sys._base_executable)')}
VENV=$WORK/pip-venv
rm -rf "$VENV"
mkdir -p "$WORK"
"$PY" -m venv "$VENV"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install --quiet -e "$ROOT"
"$VENV/bin/evalkit" --help >/dev/null
(cd "$ROOT/notebooks" && "$VENV/bin/python" -c \
  'import evalkit; r = evalkit.load(evalkit.find_runs(), progress=False); assert r.trials.height > 0; print("pip path: evalkit", evalkit.__version__, "loads", r.trials.height, "trials")')
