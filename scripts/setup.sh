#!/usr/bin/env bash
# Set up evalkit's environment on a fresh machine: uv (found, else from PyPI once), then the
# project venv (.venv) from uv.lock. Never downloads a Python: uses the machine's 3.11+.
# Works from any folder, with a venv active and with pyenv shims on PATH; a run with
# nothing to do prints one line.
set -euo pipefail
cd "$(dirname "$0")/.."

# an active venv (this project's .venv has no pip) must not be the Python that runs uv
if [ -n "${VIRTUAL_ENV:-}" ]; then
  PATH=$(printf '%s' "$PATH" | tr ':' '\n' | { grep -vxF "$VIRTUAL_ENV/bin" || true; } | paste -sd: -)
  unset VIRTUAL_ENV
fi

export UV_PYTHON_DOWNLOADS=never
export UV_LINK_MODE="${UV_LINK_MODE:-copy}"
# installed packages are compiled to bytecode once: where PYTHONDONTWRITEBYTECODE is set (CI
# images, containers) every process would otherwise compile each module it imports again
export UV_COMPILE_BYTECODE="${UV_COMPILE_BYTECODE:-1}"

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

# uv: on PATH, or where an earlier run of this script put it (the Python's scripts folder,
# ~/.local/bin, ~/.cargo/bin), else installed once from PyPI with that Python's pip
find_uv() {
  local scripts
  scripts=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  for cand in "$(command -v uv 2>/dev/null || true)" "$scripts/uv" "$HOME/.local/bin/uv" "$HOME/.cargo/bin/uv"; do
    [ -n "$cand" ] && [ -x "$cand" ] && { echo "$cand"; return 0; }
  done
  return 1
}
if ! UV=$(find_uv); then
  "$PY" -m pip --version >/dev/null 2>&1 || { echo "setup: uv is missing and $PY has no pip; install uv (https://docs.astral.sh/uv/)" >&2; exit 1; }
  echo "setup: installing uv from PyPI (once)" >&2
  export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
  "$PY" -m pip install --quiet uv >&2 || "$PY" -m pip install --quiet --user uv >&2
  UV=$(find_uv) || { echo "setup: uv was installed but not found; put it on PATH" >&2; exit 1; }
fi

"$UV" sync --locked --all-extras --python "$PY" --quiet
echo "setup: ready (.venv, $(.venv/bin/python --version))" >&2
