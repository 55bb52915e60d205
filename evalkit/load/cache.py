"""Persistent Parquet cache, one folder per job, outside the job folder.

Location: ``$EVALKIT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/evalkit`` or
``~/.cache/evalkit``. Each job gets ``<root>/<hash of the job's resolved path>/`` holding
named Parquet tables. Tables are written atomically (temporary file + rename) so a reader
never sees a half-written file, and every table carries the extractor version it was built
with: bumping :data:`CACHE_VERSION` (or a reader's own version string) invalidates old
entries. Callers decide validity themselves by storing a per-trial signature column (file
size + mtime of the inputs) next to the rows; see ``trials/table.py`` and ``steps/table.py``.

The cache never holds anything that is not in the job folder already, and a broken or
unreadable cache entry is ignored (rebuilt), never an error.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import orjson
import polars as pl

CACHE_VERSION = "1"


def cache_root() -> Path:
    """The folder that holds every job's cache entries."""
    env = os.environ.get("EVALKIT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "evalkit" if xdg else Path.home() / ".cache" / "evalkit"


def path_key(path: str | os.PathLike[str], resolved: bool = False) -> str:
    """A short stable key for a folder: blake2b of its resolved absolute path.

    ``resolved=True`` skips resolving when the caller already has the resolved path.
    """
    real = os.fspath(path) if resolved else os.path.realpath(os.fspath(path))
    return hashlib.blake2b(real.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def job_cache_dir(job_dir: str | os.PathLike[str]) -> Path:
    return cache_root() / f"v{CACHE_VERSION}" / path_key(job_dir)


def _table_path(job_dir: str | os.PathLike[str], name: str) -> Path:
    return job_cache_dir(job_dir) / f"{name}.parquet"


def _meta_path(job_dir: str | os.PathLike[str], name: str) -> Path:
    return job_cache_dir(job_dir) / f"{name}.meta.json"


def read_table(
    job_dir: str | os.PathLike[str], name: str, version: str
) -> tuple[pl.DataFrame, dict] | None:
    """Return (frame, meta) for a cached table built with ``version``, else None."""
    meta_p = _meta_path(job_dir, name)
    tab_p = _table_path(job_dir, name)
    try:
        meta = orjson.loads(meta_p.read_bytes())
        if meta.get("version") != version:
            return None
        df = pl.read_parquet(tab_p)
    except Exception:  # missing, corrupt or unreadable cache: rebuild
        return None
    return df, meta


def write_table(
    job_dir: str | os.PathLike[str],
    name: str,
    version: str,
    df: pl.DataFrame,
    meta: dict | None = None,
) -> None:
    """Atomically write a table and its meta; failures are ignored (cache is optional)."""
    d = job_cache_dir(job_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".parquet.tmp")
        os.close(fd)
        df.write_parquet(tmp, compression="lz4", statistics=False)
        os.replace(tmp, _table_path(job_dir, name))
        m = dict(meta or {})
        m["version"] = version
        m["job_dir"] = os.path.realpath(os.fspath(job_dir))
        fd, tmpm = tempfile.mkstemp(dir=d, suffix=".meta.tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps(m))
        os.replace(tmpm, _meta_path(job_dir, name))
    except OSError:
        pass


def clear(job_dir: str | os.PathLike[str] | None = None) -> None:
    """Delete the cache of one job, or of every job."""
    import shutil

    target = job_cache_dir(job_dir) if job_dir is not None else cache_root()
    shutil.rmtree(target, ignore_errors=True)


def file_sig(path: str) -> str:
    """'size:mtime_ns' of a file or folder, or '-' when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"
