"""Safe file reading for every reader: size caps, orjson, errors as values.

Readers never raise on file content. :func:`read_json` returns ``(value, None)`` or
``(None, LoadError)``; the caller attaches job / trial ids and records the error.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from contextvars import ContextVar
from stat import S_ISREG
from typing import Any

import orjson

from evalkit.load.errors import LoadError

#: Files larger than this are not parsed (a load error 'too_large' instead). Override with
#: the EVALKIT_MAX_FILE_MB environment variable.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


_cap_cache: tuple[str | None, int] = (None, DEFAULT_MAX_BYTES)
_held_cap: ContextVar[int | None] = ContextVar("evalkit_held_cap", default=None)


@contextlib.contextmanager
def held_cap() -> Iterator[int]:
    """Read the size cap once for a batch of files (reading the environment costs ~1 us a
    file, a tenth of reading a small result.json); :func:`max_bytes` returns it inside."""
    cap = _env_cap()
    token = _held_cap.set(cap)
    try:
        yield cap
    finally:
        _held_cap.reset(token)


def max_bytes() -> int:
    """The per-file size cap in bytes (EVALKIT_MAX_FILE_MB, else 256 MB)."""
    held = _held_cap.get()
    return _env_cap() if held is None else held


def _env_cap() -> int:
    global _cap_cache
    env = os.environ.get("EVALKIT_MAX_FILE_MB")
    if env == _cap_cache[0]:
        return _cap_cache[1]
    cap = DEFAULT_MAX_BYTES
    if env:
        with contextlib.suppress(ValueError):
            cap = int(float(env) * 1024 * 1024)
    _cap_cache = (env, cap)
    return cap


def read_bytes(
    path: str, level: str, limit: int | None = None
) -> tuple[bytes | None, LoadError | None]:
    """Read a whole file, refusing folders, special files and files over the size cap."""
    limit = max_bytes() if limit is None else limit
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, LoadError(path, level, "missing", "file not found")
    except OSError as e:  # symlink loop, permission, name too long...
        return None, LoadError(path, level, "unreadable", f"{type(e).__name__}: {e}")
    import stat as _stat

    if _stat.S_ISDIR(st.st_mode):
        return None, LoadError(path, level, "not_a_file", "a folder where a file was expected")
    if not _stat.S_ISREG(st.st_mode):
        return None, LoadError(path, level, "not_a_file", "not a regular file")
    if st.st_size > limit:
        return None, LoadError(
            path,
            level,
            "too_large",
            f"{st.st_size} bytes is over the {limit}-byte cap (EVALKIT_MAX_FILE_MB)",
        )
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        return None, LoadError(path, level, "unreadable", f"{type(e).__name__}: {e}")
    if len(data) > limit:
        return None, LoadError(
            path, level, "too_large", f"grew over the {limit}-byte cap while reading"
        )
    return data, None


_OPEN_NB = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(
    path: str, level: str, limit: int | None = None
) -> tuple[bytes | None, LoadError | None, os.stat_result | None]:
    """(bytes, error, stat) of a file: the hot-path reader of trial and trajectory files.

    One non-blocking open + fstat + read for a regular file within the cap (a FIFO cannot
    block; the stat comes free for cache signatures); anything unusual (missing, folder,
    FIFO, over the cap, a size that changed while reading) goes through :func:`read_bytes`
    for the exact error, and the stat is then None.
    """
    cap = max_bytes() if limit is None else limit
    try:
        fd = os.open(path, _OPEN_NB)
    except (OSError, ValueError):
        pass
    else:
        try:
            st = os.fstat(fd)
            size = st.st_size
            if S_ISREG(st.st_mode) and size <= cap:
                data = os.read(fd, size + 1)
                if len(data) == size:
                    return data, None, st
        except OSError:
            pass
        finally:
            os.close(fd)
    data, err = read_bytes(path, level, cap)
    return data, err, None


def read_head(path: str, n: int) -> bytes | None:
    """Up to ``n`` bytes from the start of a regular file; None for anything else.

    For sniffers that peek at a file before deciding what it is: the open never blocks
    (a FIFO named like a data file would otherwise wait for a writer forever) and folders,
    devices and sockets are refused.
    """
    import stat as _stat

    try:
        fd = os.open(path, _OPEN_NB)
    except (OSError, ValueError):
        return None
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, n)
    except OSError:
        return None
    finally:
        os.close(fd)


class NotARegularFile(OSError):
    """A path that names a FIFO, a folder or a device where a regular file was expected."""


def tail_bytes(path: str, max_bytes: int) -> tuple[bytes, bool]:
    """The last ``max_bytes`` of a regular file, and whether the start was cut.

    The open never blocks (a FIFO named like a log would wait for a writer forever).
    Raises OSError (:class:`NotARegularFile` for anything but a regular file).
    """
    fd = os.open(path, _OPEN_NB)
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode):
            raise NotARegularFile("not a regular file")
        cut = st.st_size > max_bytes
        if cut:
            os.lseek(fd, st.st_size - max_bytes, os.SEEK_SET)
        chunks = []
        left = max_bytes
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks), cut
    finally:
        os.close(fd)


def read_tail(path: str | None, max_bytes: int = 256 * 1024) -> tuple[str | None, bool]:
    """The last ``max_bytes`` of a regular file as text, and whether the start was cut.

    For verifier output and agent logs shown to people (CLI, bundles, widgets): anything
    that is not a readable regular file gives ``(None, False)``, bytes that are not UTF-8
    are replaced.
    """
    if not path:
        return None, False
    try:
        data, cut = tail_bytes(path, max_bytes)
    except (OSError, ValueError):
        return None, False
    return data.decode("utf-8", errors="replace"), cut


def text_name(s: str) -> str:
    """A file name or path as text every writer accepts: bytes that were not UTF-8 (kept by
    Python as surrogate escapes) become U+FFFD. For error rows and labels only; the file
    itself is opened by its real name."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _fix_str(s: str) -> str:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:  # a lone surrogate: U+FFFD instead
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _scrub_surrogates(val: Any) -> Any:
    """Replace lone surrogates (``"\\ud800"`` is valid JSON but not Unicode: Polars, orjson
    and UTF-8 writers refuse it) in every string of a parsed value; iterative, any depth."""
    if isinstance(val, str):
        return _fix_str(val)
    stack = [val]
    while stack:
        c = stack.pop()
        if isinstance(c, dict):
            for k in list(c):
                v = c[k]
                if isinstance(v, str):
                    c[k] = _fix_str(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
                fk = _fix_str(k)
                if fk != k:
                    c[fk] = c.pop(k)
        elif isinstance(c, list):
            for i, v in enumerate(c):
                if isinstance(v, str):
                    c[i] = _fix_str(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return val


def _lenient_loads(data: bytes) -> Any:
    """Parse JSON that orjson rejects for NaN / Infinity literals or lone surrogate escapes
    (Python's json allows both; surrogates are then replaced)."""
    import json

    text = data.decode("utf-8", errors="strict")
    val = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        val = _scrub_surrogates(val)
    return val


#: How deep JSON may nest (orjson's fixed limit). Deeper documents are refused by this
#: rule, not by Python's recursion limit, which varies with the caller's stack and with
#: whatever raised it (Hypothesis does while a test runs): same file, same result.
MAX_JSON_DEPTH = 1024
NESTING_TOO_DEEP = "nesting too deep"


def parse_json(data: bytes, path: str, level: str) -> tuple[Any, LoadError | None]:
    """orjson first; NaN/Infinity literals fall back to the stdlib parser. JSON nested
    deeper than :data:`MAX_JSON_DEPTH` is a 'json_decode' error."""
    if not data.strip():
        return None, LoadError(path, level, "empty", "empty file")
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as e:
        first = str(e)
        if e.msg == "depth limit exceeded":
            return None, LoadError(path, level, "json_decode", NESTING_TOO_DEEP)
    try:
        val = _lenient_loads(data)
    except UnicodeDecodeError as e:
        return None, LoadError(path, level, "invalid_utf8", f"not UTF-8 text: {e}")
    except RecursionError:  # NaN literals within MAX_JSON_DEPTH, on a deep stack
        return None, LoadError(path, level, "json_decode", NESTING_TOO_DEEP)
    except ValueError:
        return None, LoadError(path, level, "json_decode", first)
    if may_nest_deeper(data, MAX_JSON_DEPTH) and nested_deeper(val, MAX_JSON_DEPTH):
        return None, LoadError(path, level, "json_decode", NESTING_TOO_DEEP)
    return val, None


def may_nest_deeper(data: bytes, limit: int) -> bool:
    """Whether JSON text could nest more than ``limit`` levels (it holds that many '[' and
    '{'; a cheap test that rules out most documents)."""
    return data.count(b"[") + data.count(b"{") > limit


def nested_deeper(v: Any, limit: int) -> bool:
    """Whether lists / dicts in a parsed value nest more than ``limit`` levels (iterative)."""
    level = [v] if isinstance(v, (dict, list)) else []
    for _ in range(limit):
        level = [
            c for x in level for c in (x.values() if isinstance(x, dict) else x)
            if isinstance(c, (dict, list))
        ]  # fmt: skip
        if not level:
            return False
    return bool(level)


def read_json(path: str, level: str, limit: int | None = None) -> tuple[Any, LoadError | None]:
    """Read and parse a JSON file; never raises on content."""
    data, err = read_bytes(path, level, limit)
    if err is not None:
        return None, err
    return parse_json(data, path, level)


def finite_float(v: Any) -> float | None:
    """A finite float from an int/float/bool-free value, else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def as_int(v: Any) -> int | None:
    """An int from an int (or integral float within int64), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else None
    if isinstance(v, float) and math.isfinite(v) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return None


def as_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def as_dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}
