"""Persistent Parquet cache, one folder per job, outside the job folder.

Location: ``$EVALKIT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/evalkit`` or
``~/.cache/evalkit``. Each job gets ``<root>/<hash of the job's resolved path>/`` holding
named Parquet tables. Tables are written atomically (temporary file + rename) so a reader
never sees a half-written file, and every table carries the extractor version it was built
with: bumping :data:`CACHE_VERSION` (or a reader's own version string) invalidates old
entries. Callers decide validity themselves by storing a per-trial signature column (file
size, mtime and inode change time of the inputs, ``stat_sig``) next to the rows; see
``trials/table.py``. What the cache protects against and what not: SECURITY.md.

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


def read_meta(job_dir: str | os.PathLike[str], name: str, version: str) -> dict | None:
    """The meta of a cached table built with ``version`` (None when missing or stale)."""
    try:
        meta = orjson.loads(_meta_path(job_dir, name).read_bytes())
    except Exception:
        return None
    return meta if isinstance(meta, dict) and meta.get("version") == version else None


def read_rows(job_dir: str | os.PathLike[str], name: str) -> pl.DataFrame | None:
    """The rows of a cached table (None when missing or unreadable)."""
    try:
        return pl.read_parquet(_table_path(job_dir, name))
    except Exception:  # missing, corrupt or unreadable cache: rebuild
        return None


def read_table(
    job_dir: str | os.PathLike[str], name: str, version: str
) -> tuple[pl.DataFrame, dict] | None:
    """Return (frame, meta) for a cached table built with ``version``, else None."""
    meta = read_meta(job_dir, name, version)
    df = read_rows(job_dir, name) if meta is not None else None
    return None if df is None else (df, meta)  # type: ignore[return-value]


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


#: Whole-load results kept (``write_load``); the least recently written go first.
MAX_LOADS = 8


def _loads_dir() -> Path:
    return cache_root() / f"v{CACHE_VERSION}" / "loads"


def read_load(key: str) -> tuple[pl.DataFrame, dict] | None:
    """A whole-load result stored under ``key`` (see ``write_load``), else None."""
    d = _loads_dir()
    try:
        meta = orjson.loads((d / f"{key}.meta.json").read_bytes())
        df = pl.read_parquet(d / f"{key}.parquet")
    except Exception:
        return None
    return (df, meta) if isinstance(meta, dict) and meta.get("key") == key else None


def write_load(key: str, df: pl.DataFrame, meta: dict) -> None:
    """Store a frame computed from cached tables only, under a key naming those tables'
    generations and the options (the caller builds it); keeps the newest MAX_LOADS."""
    d = _loads_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".parquet.tmp")
        os.close(fd)
        # one row group: read back as one chunk, so adding a column later copies nothing else
        df.write_parquet(tmp, compression="lz4", statistics=False, row_group_size=max(df.height, 1))
        os.replace(tmp, d / f"{key}.parquet")
        fd, tmpm = tempfile.mkstemp(dir=d, suffix=".meta.tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps({**meta, "key": key}))
        os.replace(tmpm, d / f"{key}.meta.json")
        metas = sorted(d.glob("*.meta.json"), key=lambda q: q.stat().st_mtime, reverse=True)
        for old in metas[MAX_LOADS:]:
            stem = old.name[: -len(".meta.json")]
            old.unlink(missing_ok=True)
            (d / f"{stem}.parquet").unlink(missing_ok=True)
    except (OSError, TypeError):
        pass


def read_entry(job_dir: str | os.PathLike[str], name: str) -> object | None:
    """A small JSON entry of a job's cache folder (None when missing or unreadable)."""
    try:
        return orjson.loads((job_cache_dir(job_dir) / f"{name}.json").read_bytes())
    except Exception:
        return None


def write_entry(job_dir: str | os.PathLike[str], name: str, obj: object) -> None:
    """Atomically write a small JSON entry; failures are ignored (cache is optional)."""
    d = job_cache_dir(job_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".json.tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps(obj))
        os.replace(tmp, d / f"{name}.json")
    except (OSError, TypeError):
        pass


def _assets_dir() -> Path:
    return cache_root() / "assets"


def read_asset(name: str) -> str | None:
    """A text file the cache keeps for every report (None when missing or unreadable)."""
    try:
        text = (_assets_dir() / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def write_asset(name: str, text: str) -> None:
    """Atomically keep a text file under ``name`` (versioned by the caller); failures are
    ignored (the cache is optional)."""
    d = _assets_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, d / name)
    except OSError:
        pass


def clear(job_dir: str | os.PathLike[str] | None = None) -> None:
    """Delete the cache of one job, or of every job."""
    import shutil

    target = job_cache_dir(job_dir) if job_dir is not None else cache_root()
    shutil.rmtree(target, ignore_errors=True)


def stat_sig(st: os.stat_result) -> str:
    """'size:mtime_ns:ctime_ns' of a stat result. The inode change time is set by the kernel
    on every write, rename or ``touch``, and no program can set it back, so an in-place edit
    whose mtime was restored still changes the signature."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def file_sig(path: str) -> str:
    """``stat_sig`` of a file or folder, or '-' when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return stat_sig(st)
