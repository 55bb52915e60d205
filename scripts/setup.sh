#!/usr/bin/env bash
# Set up evalkit's environment on a fresh machine: uv (from PyPI if missing), then the
# project venv (.venv) from uv.lock. Never downloads a Python: uses the machine's 3.11+.
set -euo pipefail
cd "$(dirname "$0")/.."

export UV_PYTHON_DOWNLOADS=never
export UV_LINK_MODE="${UV_LINK_MODE:-copy}"

find_python() {
  for cand in "${EVALKIT_PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$cand" ] || continue
    local exe
    exe=$(command -v "$cand" 2>/dev/null) || continue
    # pyenv shims may exist for versions that are not selected: ask the interpreter itself
    if "$exe" -c 'import sys; assert sys.version_info >= (3, 11); print(sys.executable)' >/dev/null 2>&1; then
      "$exe" -c 'import sys; print(sys.executable)'
      return 0
    fi
  done
  return 1
}

PY=$(find_python) || { echo "setup: need Python >= 3.11 (set EVALKIT_PYTHON)" >&2; exit 1; }

if ! command -v uv >/dev/null 2>&1; then
  echo "setup: installing uv from PyPI" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check uv >&2 \
    || "$PY" -m pip install --quiet --user --disable-pip-version-check uv >&2
  export PATH="$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$HOME/.local/bin:$PATH"
fi

uv sync --locked --all-extras --python "$PY" --quiet
echo "setup: ready (.venv, $(.venv/bin/python --version))" >&2
