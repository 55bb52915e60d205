"""The compiled ATIF extractor (``native/atif``, Rust, no dependencies) behind ctypes calls.

``parse`` hands a batch of trial folders to the library, which parses them on one thread
per core (outside the GIL) exactly as ``steps/extract.py`` + ``steps/atif.py`` would:
folder listing, continuations, subagents, labels, error rows, every step and call value.
Its tables (``*_COLS``) are taken out as Polars frames in a ``Layout`` (which columns, in
which order, typed how) through the Arrow C stream interface: one call per frame, the
library's buffers moved, not copied. A trial the port does not cover exactly comes back
with status 1 and nothing else: ``steps/batch.py`` gives it to the Python path, so the
frames never depend on which path ran (``tests/load_steps/test_native_parity.py``).
``probe`` lists trial folders for the cache signatures the same way.

Built by ``scripts/build_native.sh`` (run by ``scripts/setup.sh``) into
``evalkit/load/steps/_evalkit_atif.so``. Without it (no Rust toolchain), or when its column
layout is not this module's (a stale build), everything goes through the Python path,
only slower. ``EVALKIT_NATIVE=0`` forces the Python path.
"""

from __future__ import annotations

import array
import ctypes
import functools
import itertools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from evalkit.load.steps.arrow_c import (  # noqa: F401  (re-exported: steps/batch.py)
    KIND_FORMAT,
    NULL,
    ROW_TRIAL_ID,
    TRIAL_ID,
    Layout,
    arrow_format,
    import_stream,
    layout,
    raw_layout,
)

#: Where the build script puts the library (EVALKIT_NATIVE_LIB overrides).
LIB_PATH = Path(__file__).with_name("_evalkit_atif.so")

# Column layout of the tables (must match native/atif/src/extract.rs and probe.rs).
STEP_COLS = (
    ("trial", "i"), ("step_index", "i"), ("trajectory", "s"), ("is_main", "b"),
    ("step_id", "i"), ("source", "s"), ("model_name", "s"), ("message", "s"),
    ("reasoning_content", "s"), ("_ts", "s"), ("prompt_tokens", "i"),
    ("completion_tokens", "i"), ("cached_tokens", "i"), ("cost_usd", "f"),
    ("n_tool_calls", "i"), ("observation", "s"), ("is_copied_context", "b"),
    ("llm_call_count", "i"), ("extra", "s"), ("ts_us", "i"),
)  # fmt: skip
CALL_COLS = (
    ("trial", "i"), ("step_index", "i"), ("call_index", "i"), ("trajectory", "s"),
    ("is_main", "b"), ("tool_call_id", "s"), ("function_name", "s"), ("arguments", "s"),
    ("command", "s"), ("observation", "s"), ("observation_source", "s"), ("_s_err", "b"),
    ("_s_exit", "i"), ("_ts", "s"), ("exit_code", "i"), ("is_error", "b"),
    ("is_error_source", "s"), ("retried", "b"), ("ts_us", "i"), ("fin", "b"),
)  # fmt: skip
TRIAL_COLS = (
    ("status", "i"), ("n_steps", "i"), ("n_tool_calls", "i"), ("fm_prompt", "f"),
    ("fm_completion", "f"), ("fm_cached", "f"), ("fm_cost", "f"), ("agent", "s"),
    ("has_data", "b"), ("n_turns", "i"), ("differ", "b"),
)  # fmt: skip
ERROR_COLS = (("trial", "i"), ("path", "s"), ("kind", "s"), ("message", "s"))
PROBE_COLS = (("agent", "s"), ("steps", "i"), ("sig", "s"), ("total", "i"), ("_", "i"))

#: What the library must report from ek_layout (table kinds, then the ABI revision).
LAYOUT = (
    "|".join(
        "".join(k for _, k in cols)
        for cols in (STEP_COLS, CALL_COLS, TRIAL_COLS, ERROR_COLS, PROBE_COLS)
    )
    + "|5"
)

_lib: ctypes.CDLL | None = None
_tried = False


def _load() -> ctypes.CDLL | None:
    global _lib, _tried
    if _tried:
        return _lib
    _tried = True
    path = os.environ.get("EVALKIT_NATIVE_LIB") or str(LIB_PATH)
    try:
        lib = ctypes.CDLL(path)
        _declare(lib)
    except (OSError, AttributeError):  # not built, or a stale build without these symbols
        return None
    if lib.ek_layout() != LAYOUT.encode():
        return None  # a stale build writing other columns: the Python path instead
    _lib = lib
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    """Argument and result types of the C ABI (native/atif/src/lib.rs)."""
    c = ctypes
    u64p, vp = c.POINTER(c.c_uint64), c.c_void_p
    # paths, offsets (an address: _encode), n, x, threads
    batch = [c.c_char_p, vp, c.c_uint64, c.c_uint64, c.c_uint32]
    text = [c.c_char_p, c.c_uint64]
    # batch, part, table, names, formats, sources, n, ids, id offsets, n ids, keep
    stream = [vp, c.c_uint32, c.c_uint32, *text, *text, vp, c.c_uint64, c.c_char_p, vp]
    stream += [c.c_uint64, c.c_int64]
    for name, res, args in (
        ("ek_start", vp, batch),
        ("ek_finish", vp, [vp]),
        ("ek_compare", c.c_int64, [vp, vp, c.c_uint64]),
        ("ek_probe", vp, [c.c_char_p, vp, c.c_uint64, c.c_uint32, c.c_uint32]),
        ("ek_parts", c.c_uint32, [vp]),
        ("ek_rows", c.c_int64, [vp, c.c_uint32, c.c_uint32]),
        ("ek_stream", vp, stream),
        ("ek_stream_free", None, [vp]),
        ("ek_ints", c.POINTER(c.c_int64), [vp, c.c_uint32, c.c_uint32, c.c_uint32]),
        ("ek_errors_json", c.c_void_p, [vp, c.c_uint32, u64p]),
        ("ek_free", None, [vp]),
        ("ek_finish_json", vp, [c.c_char_p, c.c_uint64]),
        ("ek_layout", c.c_char_p, []),
        ("ek_warm", None, [c.c_uint32, c.c_uint64]),
        ("ek_counts", None, [vp, c.c_uint32, vp, c.c_uint64, vp]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def available() -> bool:
    """True when the compiled extractor is built and loads."""
    return _load() is not None


def enabled() -> bool:
    """Use the compiled extractor now: built, and EVALKIT_NATIVE is not '0'."""
    return os.environ.get("EVALKIT_NATIVE", "1") != "0" and available()


#: Tables of a ``parse`` result.
STEPS, CALLS, TRIALS, ERRORS = 0, 1, 2, 3
_TABLE_COLS = {STEPS: STEP_COLS, CALLS: CALL_COLS, TRIALS: TRIAL_COLS, ERRORS: ERROR_COLS}


class Result:
    """A library result (``ek_finish`` / ``ek_probe`` / ``ek_finish_json``): one part of
    tables (a worker that died leaves an empty part: ``ok`` is then False), freed with
    this object; a table taken out as a frame owns its memory itself."""

    __slots__ = ("h", "lib")

    def __init__(self, lib: ctypes.CDLL, h: int) -> None:
        self.lib, self.h = lib, h

    def __del__(self) -> None:
        self.lib.ek_free(self.h)

    def ok(self, tables: int, per_folder: int, n: int) -> bool:
        """One part of ``tables`` tables, table ``per_folder`` with ``n`` rows."""
        lib, h = self.lib, self.h
        if lib.ek_parts(h) != 1 or any(lib.ek_rows(h, 0, t) < 0 for t in range(tables)):
            return False
        return lib.ek_rows(h, 0, per_folder) == n

    def rows(self, table: int) -> int:
        return self.lib.ek_rows(self.h, 0, table)

    def compare(self, totals: np.ndarray) -> int:
        """Compare the parsed trials' final_metrics totals with ``totals``, their result.json
        totals as a C-contiguous float64 array of shape (4, folders) (n_input_tokens,
        n_output_tokens, n_cache_tokens, cost_usd; NaN = unknown; ``frames.result_totals``)
        into TRIALS' ``differ`` (``frames.metrics_differ_expr``'s rule); how many differ."""
        n = self.rows(TRIALS)
        if totals.shape != (4, n) or totals.dtype != np.float64 or not totals.flags.c_contiguous:
            raise ValueError(f"totals must be a C-contiguous float64 array of shape (4, {n})")
        got = self.lib.ek_compare(self.h, totals.ctypes.data, n)
        if got < 0:
            raise RuntimeError("evalkit native extractor: no TRIALS table to compare")
        return int(got)

    def counts(self, spec: tuple[array.array, int]) -> list[int]:
        """The counts of a ``count_spec`` in one call (-1 where out of range)."""
        triples, n = spec
        out = array.array("q", bytes(8 * n))
        self.lib.ek_counts(self.h, 0, _addr(triples), n, _addr(out))
        return out.tolist()

    def ints(self, table: int, column: str) -> list[int]:
        """The values of an Int64 column (a null reads as 0), as a list."""
        p = self.lib.ek_ints(self.h, 0, table, _column(table, column))
        if not p:
            raise RuntimeError(f"evalkit native extractor: no Int64 column {column!r}")
        return p[: self.rows(table)]

    def errors(self) -> list[tuple[int, str, str, str]]:
        """The error rows (ERROR_COLS) of a parse result."""
        import orjson

        n = ctypes.c_uint64()
        p = self.lib.ek_errors_json(self.h, 0, ctypes.byref(n))
        return [tuple(r) for r in orjson.loads(ctypes.string_at(p, n.value))]

    def frame(
        self, table: int, lay: Layout, ids: tuple | None = None, keep: str | None = None
    ) -> pl.DataFrame:
        """Table ``table`` as a frame of layout ``lay``, its buffers moved to Polars (the
        table is empty afterwards). ``ids``: ``encode_ids`` of the trial ids; ``keep``: only
        the rows where that Boolean column of the table is true."""
        data, offs, n_ids = (ids[0], _addr(ids[1]), ids[2]) if ids is not None else (None, None, 0)
        lib, nb, fb = self.lib, lay.names, lay.formats
        k = -1 if keep is None else _column(table, keep)
        s = lib.ek_stream(
            self.h, 0, table, nb, len(nb), fb, len(fb), lay.sources, len(lay.columns), data, offs, n_ids, k
        )  # fmt: skip
        if not s:
            raise RuntimeError("evalkit native extractor: the table does not fit the layout")
        try:
            return import_stream(s)
        finally:
            lib.ek_stream_free(s)  # what Polars took is released by Polars


#: ``count_spec`` operations: rows of the table, the false values of a Boolean column or
#: the nulls of another, Int64 values equal to 1, parts of the result.
ROWS, FALSE, ONES, PARTS = 0, 1, 2, 3


def count_spec(
    asks: Sequence[tuple[int, str | None, int]],
) -> tuple[array.array, int]:
    """(table, column name or None, operation) asks -> the argument of ``Result.counts``."""
    flat = [x for t, c, op in asks for x in (t, 0 if c is None else _column(t, c), op)]
    return array.array("I", flat), len(asks)


def _column(table: int, name: str) -> int:
    return [c for c, _ in _TABLE_COLS[table]].index(name)


def _lib_or_raise() -> ctypes.CDLL:
    lib = _load()
    if lib is None:
        raise RuntimeError("evalkit native extractor is not built (scripts/build_native.sh)")
    return lib


def _encode(
    texts: list[str], encode: Callable[[str], bytes] = os.fsencode
) -> tuple[bytes, array.array, int]:
    """(bytes, n + 1 offsets (uint64; pass ``_addr`` of it), n) of ``texts`` (paths:
    os.fsencode)."""
    joined = "".join(texts)
    if joined.isascii():  # the usual case: one encode, lengths in characters = bytes
        data, lens = joined.encode("ascii"), map(len, texts)
    else:
        enc = [encode(p) for p in texts]
        data, lens = b"".join(enc), map(len, enc)
    return data, array.array("Q", itertools.accumulate(lens, initial=0)), len(texts)


# the library reads uint64 offsets, uint32 count specs, writes int64 counts
assert array.array("Q").itemsize == array.array("q").itemsize == 8
assert array.array("I").itemsize == 4


def _addr(offs: array.array) -> int:
    """The address of an ``_encode`` offsets array (valid while the array lives)."""
    return offs.buffer_info()[0]


def encode_ids(ids: list[str]) -> tuple[bytes, array.array, int]:
    """Trial ids for ``Result.frame``, as UTF-8 (ids from a Polars frame always are)."""
    return _encode(ids, str.encode)


@functools.cache
def _cpus() -> int:
    return os.cpu_count() or 1


def _threads(n: int, threads: int | None, per: int) -> int:
    """Threads for ``n`` folders: one per ``per`` folders, at most one per core (and 8)."""
    if threads is None:
        threads = max(1, min(_cpus(), 8, (n + per - 1) // per))
    return threads


def warm(n: int, threads: int | None = None) -> None:
    """Announce a ``parse`` of ``n`` folders: its pool threads start spinning (for up to
    2 ms) so the parse does not wait for sleeping threads to wake (30-80 us each on a VM).
    Call it before preparing the batch; it costs nothing when the parse runs on one thread."""
    helpers = _threads(n, threads, 4) - 1
    if helpers > 0:
        _lib_or_raise().ek_warm(helpers, 2_000_000)


class Pending:
    """A parse begun by ``start``: the library's pool threads are parsing; ``finish`` has
    this thread join them and returns the ``Result``. Not finished: finished and freed
    when collected."""

    __slots__ = ("h", "lib")

    def __init__(self, lib: ctypes.CDLL, h: int) -> None:
        self.lib, self.h = lib, h

    def finish(self) -> Result:
        h, self.h = self.h, None
        if h is None:
            raise RuntimeError("evalkit native extractor: parse already finished")
        return Result(self.lib, self.lib.ek_finish(h))  # releases the GIL while it works

    def __del__(self) -> None:
        if self.h is not None:
            self.lib.ek_free(self.lib.ek_finish(self.h))


def start(dirs: list[str], cap: int, threads: int | None = None) -> Pending:
    """Begin parsing the trajectories of trial folders (files over ``cap`` bytes: Python
    path) on the library's pool threads and return at once: what the caller does before
    ``Pending.finish`` overlaps with the parsing (on one thread, everything is done in
    ``finish``)."""
    lib = _lib_or_raise()
    buf, offs, n = _encode(dirs)
    return Pending(lib, lib.ek_start(buf, _addr(offs), n, cap, _threads(n, threads, 4)))


def parse(
    dirs: list[str], cap: int, threads: int | None = None, totals: np.ndarray | None = None
) -> Result:
    """Parse the trajectories of trial folders (files over ``cap`` bytes: Python path):
    tables STEPS, CALLS, TRIALS (a row per folder) and ERRORS; check ``ok(4, TRIALS,
    len(dirs))`` before use. ``totals``: see ``Result.compare`` (TRIALS' ``differ`` is
    False without them)."""
    res = start(dirs, cap, threads).finish()
    if totals is not None:
        res.compare(totals)
    return res


def probe(dirs: list[str], sign: bool, threads: int | None = None) -> list[tuple | None]:
    """List trial folders like ``table.probe``: per folder (agent names or None, steps
    True/False/None, signature, total bytes), or None where Python must probe it."""
    lib = _lib_or_raise()
    buf, offs, n = _encode(dirs)
    res = Result(lib, lib.ek_probe(buf, _addr(offs), n, int(sign), _threads(n, threads, 64)))
    if not res.ok(1, 0, n):  # a worker failed: Python probes everything
        return [None] * n
    out: list[tuple | None] = []
    for agent, steps, sig, total, _ in res.frame(0, raw_layout(PROBE_COLS)).iter_rows():
        if sig is None:
            out.append(None)
            continue
        names = None if agent is None else (frozenset(agent.split("\0")) if agent else frozenset())
        out.append((names, None if steps is None else steps == 1, sig, total))
    return out


#: Columns of ``finish_rows`` (the test hook of native/atif/src/finish.rs).
FINISH_COLS = (
    ("exit_code", "i"), ("is_error", "b"), ("is_error_source", "s"), ("fin", "b"),
    ("ts_us", "i"), ("ts_fin", "b"),
)  # fmt: skip


def finish_rows(rows: list) -> pl.DataFrame:
    """The compiled finishing rules (exit_code, is_error, is_error_source; ``fin`` False
    where Python must compute them) and timestamp (``ts_us``, UTC; ``ts_fin`` False where
    Python must parse it) of rows ``[observation, shell, s_err, s_exit, timestamp]``.
    For tests: steps/batch.py gets the same values from ``parse``."""
    import orjson

    lib = _lib_or_raise()
    text = orjson.dumps(rows)
    h = lib.ek_finish_json(text, len(text))
    if not h:
        raise ValueError("finish_rows: rows must be [observation, shell, s_err, s_exit, ts]")
    return Result(lib, h).frame(0, raw_layout(FINISH_COLS))
