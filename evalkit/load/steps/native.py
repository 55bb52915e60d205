"""The compiled ATIF extractor (``native/atif``, Rust, no dependencies) behind ctypes calls.

``parse_trials`` hands a batch of trial folders to the library, which parses them on one
thread per core (outside the GIL) exactly as ``steps/extract.py`` + ``steps/atif.py`` would:
folder listing, continuations, subagents, labels, error rows, every step and call value.
The result is Arrow column buffers wrapped without a copy (the library memory is freed
when the last buffer is dropped). A trial the port does not cover exactly comes back
with status 1 and nothing else: ``steps/batch.py`` gives it to the Python path, so the
frames never depend on which path ran (``tests/load_steps/test_native_parity.py``).
``probe`` lists trial folders for the cache signatures the same way.

Built by ``scripts/build_native.sh`` (run by ``scripts/setup.sh``) into
``evalkit/load/steps/_evalkit_atif.so``. Without it (no Rust toolchain), or when its column
layout is not this module's (a stale build), everything goes through the Python path,
only slower. ``EVALKIT_NATIVE=0`` forces the Python path.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

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
)  # fmt: skip
ERROR_COLS = (("trial", "i"), ("path", "s"), ("kind", "s"), ("message", "s"))
PROBE_COLS = (("agent", "s"), ("steps", "i"), ("sig", "s"), ("total", "i"), ("_", "i"))

#: What the library must report from ek_layout (table kinds, then the ABI revision).
LAYOUT = (
    "|".join(
        "".join(k for _, k in cols)
        for cols in (STEP_COLS, CALL_COLS, TRIAL_COLS, ERROR_COLS, PROBE_COLS)
    )
    + "|2"
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
    batch = [c.c_char_p, u64p, c.c_uint64, c.c_uint64, c.c_uint32]  # paths, offsets, n, x, threads
    for name, res, args in (
        ("ek_trials", vp, batch),
        ("ek_probe", vp, [c.c_char_p, u64p, c.c_uint64, c.c_uint32, c.c_uint32]),
        ("ek_parts", c.c_uint32, [vp]),
        ("ek_rows", c.c_int64, [vp, c.c_uint32, c.c_uint32]),
        ("ek_bufs", c.c_int64, [vp, c.c_uint32, c.c_uint32, c.POINTER(vp), u64p, c.c_uint32]),
        ("ek_free", None, [vp]),
        ("ek_finish_json", vp, [c.c_char_p, c.c_uint64]),
        ("ek_layout", c.c_char_p, []),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def available() -> bool:
    """True when the compiled extractor is built and loads."""
    return _load() is not None


def enabled() -> bool:
    """Use the compiled extractor now: built, and EVALKIT_NATIVE is not '0'."""
    return os.environ.get("EVALKIT_NATIVE", "1") != "0" and available()


@dataclass
class Trials:
    """What the compiled extractor made of a batch of trial folders (in the order given).

    ``trials``: a frame (TRIAL_COLS), one row per folder; status 0 = parsed; 2 = no ATIF trajectory
    (``agent`` = the names in agent/, '\\0'-joined, for the goose-log check; a not_atif
    error may be in ``errors``); 1 = the Python path must parse that trial (nothing else
    of it is here). ``steps`` / ``calls``: raw rows of the others, in
    final order, ``trial`` = position in the batch. ``errors``: (trial, path, kind,
    message) LoadError rows.
    """

    trials: pl.DataFrame
    steps: pl.DataFrame
    calls: pl.DataFrame
    errors: list[tuple[int, str, str, str]]


class _Handle:
    """Owns a result handle: freed when the last Arrow buffer viewing its memory is gone
    (pyarrow foreign buffers keep this object alive), so no column is copied out."""

    __slots__ = ("h", "lib")

    def __init__(self, lib: ctypes.CDLL, h: int) -> None:
        self.lib, self.h = lib, h

    def __del__(self) -> None:
        self.lib.ek_free(self.h)


def _table(owner: _Handle, part: int, t: int, cols: tuple) -> Any:
    import pyarrow as pa  # imported on first use (``import evalkit`` stays fast)

    types = {"i": pa.int64(), "f": pa.float64(), "b": pa.bool_(), "s": pa.large_string()}
    k = 3 * len(cols)
    ptrs, lens = (ctypes.c_void_p * k)(), (ctypes.c_uint64 * k)()
    n = owner.lib.ek_bufs(owner.h, part, t, ptrs, lens, k)
    if n < 0:
        raise RuntimeError("evalkit native extractor: bad buffer request")
    empty = pa.py_buffer(b"")

    def buf(j: int) -> Any:
        return pa.foreign_buffer(ptrs[j], lens[j], base=owner) if lens[j] else empty

    arrays = []
    for c, (_, kind) in enumerate(cols):
        parts = [buf(3 * c), buf(3 * c + 1)] + ([buf(3 * c + 2)] if kind == "s" else [])
        arrays.append(pa.Array.from_buffers(types[kind], n, parts))
    return pa.Table.from_arrays(arrays, names=[name for name, _ in cols])


def _lib_or_raise() -> ctypes.CDLL:
    lib = _load()
    if lib is None:
        raise RuntimeError("evalkit native extractor is not built (scripts/build_native.sh)")
    return lib


def _paths(paths: list[str], threads: int | None, per: int) -> tuple[bytes, Any, int, int]:
    joined = "".join(paths)
    if joined.isascii():  # the usual case: one encode, lengths in characters = bytes
        data, lens = joined.encode("ascii"), [len(p) for p in paths]
    else:
        enc = [os.fsencode(p) for p in paths]
        data, lens = b"".join(enc), [len(b) for b in enc]
    n = len(paths)
    if threads is None:
        threads = max(1, min(os.cpu_count() or 1, 8, (n + per - 1) // per))
    return data, (ctypes.c_uint64 * (n + 1))(0, *itertools.accumulate(lens)), n, threads


def probe(dirs: list[str], sign: bool, threads: int | None = None) -> list[tuple | None]:
    """List trial folders like ``table.probe``: per folder (agent names or None, steps
    True/False/None, signature, total bytes), or None where Python must probe it."""
    lib = _lib_or_raise()
    buf, arr, n, threads = _paths(dirs, threads, 64)
    owner = _Handle(lib, lib.ek_probe(buf, arr, n, 1 if sign else 0, threads))
    n_parts = lib.ek_parts(owner.h)
    if any(lib.ek_rows(owner.h, p, 0) < 0 for p in range(n_parts)):
        return [None] * n  # a worker died: Python probes everything
    t = _concat([_table(owner, p, 0, PROBE_COLS) for p in range(n_parts)])
    if t.num_rows != n:  # a worker failed: Python probes everything
        return [None] * n
    out: list[tuple | None] = []
    for agent, steps, sig, total in zip(*(t.column(i).to_pylist() for i in range(4)), strict=True):
        if sig is None:
            out.append(None)
            continue
        names = None if agent is None else (frozenset(agent.split("\0")) if agent else frozenset())
        out.append((names, None if steps is None else steps == 1, sig, total))
    return out


def _concat(tables: list) -> Any:
    import pyarrow as pa

    return pa.concat_tables(tables)


def _empty(cols: tuple) -> pl.DataFrame:
    types = {"i": pl.Int64, "f": pl.Float64, "b": pl.Boolean, "s": pl.String}
    return pl.DataFrame(schema={name: types[k] for name, k in cols})


def _all_python(n: int) -> Trials:
    """Every trial handed to the Python path."""
    nulls = [pl.lit(None, t).alias(c) for c, t in _empty(TRIAL_COLS).schema.items()]
    trials = pl.DataFrame({"_": [0] * n}).with_columns(*nulls).drop("_")
    trials = trials.with_columns(pl.lit(1, pl.Int64).alias("status"))
    return Trials(trials, _empty(STEP_COLS), _empty(CALL_COLS), [])


def parse_trials(dirs: list[str], cap: int, threads: int | None = None) -> Trials:
    """Parse the trajectories of trial folders (files over ``cap`` bytes: Python path)."""
    import pyarrow as pa

    lib = _lib_or_raise()
    buf, arr, n, threads = _paths(dirs, threads, 64)
    owner = _Handle(lib, lib.ek_trials(buf, arr, n, cap, threads))
    layout = (STEP_COLS, CALL_COLS, TRIAL_COLS, ERROR_COLS)
    n_parts = lib.ek_parts(owner.h)
    if any(lib.ek_rows(owner.h, p, t) < 0 for p in range(n_parts) for t in range(4)):
        return _all_python(n)  # a worker died (panics are caught per trial: not expected)
    parts = [[_table(owner, p, t, cols) for t, cols in enumerate(layout)] for p in range(n_parts)]
    steps_t, calls_t, trials_t, errors_t = (
        pa.concat_tables([x[i] for x in parts]) for i in range(4)
    )
    if trials_t.num_rows != n:
        return _all_python(n)
    errors = list(zip(*(errors_t.column(i).to_pylist() for i in range(4)), strict=True))
    frames = (pl.from_arrow(x) for x in (trials_t, steps_t, calls_t))
    return Trials(*frames, errors)  # type: ignore[arg-type]


#: Columns of ``finish_rows`` (the test hook of native/atif/src/finish.rs).
FINISH_COLS = (
    ("exit_code", "i"), ("is_error", "b"), ("is_error_source", "s"), ("fin", "b"),
    ("ts_us", "i"), ("ts_fin", "b"),
)  # fmt: skip


def finish_rows(rows: list) -> pl.DataFrame:
    """The compiled finishing rules (exit_code, is_error, is_error_source; ``fin`` False
    where Python must compute them) and timestamp (``ts_us``; ``ts_fin`` False where
    Python must parse it) of rows ``[observation, shell, s_err, s_exit, timestamp]``.
    For tests: steps/batch.py gets the same values from ``parse_trials``."""
    import orjson

    lib = _lib_or_raise()
    text = orjson.dumps(rows)
    h = lib.ek_finish_json(text, len(text))
    if not h:
        raise ValueError("finish_rows: rows must be [observation, shell, s_err, s_exit, ts]")
    owner = _Handle(lib, h)
    return pl.from_arrow(_table(owner, 0, 0, FINISH_COLS))  # type: ignore[return-value]
