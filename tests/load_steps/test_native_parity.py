"""Differential tests: the compiled ATIF fast path (``evalkit.load.steps.native``) gives
exactly the frames of the pure-Python path.

Every case runs ``build_trajectories(trials, cache=False, progress=False)`` twice, with
``EVALKIT_NATIVE=0`` (pure Python) and ``EVALKIT_NATIVE=1`` (native when built), and
requires equal steps / tool_calls / trial_summary frames (exact values, dtypes, row order;
float columns also compared as text so -0.0 and 0.0 differ) and equal load errors (all
fields, order ignored). Inputs:

* real data: every trial folder of tests/fixtures/harbor, the ATIF fixture tree laid out as
  trial folders (as ``bench_trajectories.lay_out`` does), every fixture file on its own as
  ``agent/trajectory.json``, the fuzz seed tree and the stored fuzz crashers;
* hand-written edge files (empty, invalid JSON, BOM, NaN, duplicate keys, 1e400, lone
  surrogates, nesting at orjson's limits, float-repr ties, continuation chains and cycles,
  odd references and labels, subagents, multi-step trials, a FIFO, symlink loops, a folder,
  the size cap, Unicode tool names / statuses / whitespace, ...), all in one batch, plus
  odd trials frames and many trials in small groups;
* a Hypothesis property: random ATIF-ish documents written with orjson, json (indented,
  ASCII or not) or a hand-rolled writer (odd number spellings, escapes, whitespace,
  duplicate keys) as 3-5 trial folders per example.

The module skips when the native library is not built, except
``test_native_built_in_ci``, which fails then when ``EVALKIT_REQUIRE_NATIVE=1`` (CI sets it).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evalkit.load.errors import LoadError
from evalkit.load.steps.table import build_trajectories
from tests.deadline import with_deadline
from tests.load_steps.bench_trajectories import fixture_mains
from tests.load_steps.steps_helpers import ATIF, trials_frame

NATIVE_MODULE = "evalkit.load.steps.native"
FIXTURES = Path(__file__).parents[1] / "fixtures"
HARBOR = FIXTURES / "harbor"
ERROR_FIELDS = ("path", "level", "error_type", "message", "job_id", "trial_id")
FRAMES = ("steps", "tool_calls", "trial_summary")
DEADLINE_S = 60  # a hang (FIFO, symlink loop) fails instead of blocking the suite


# -- native on/off ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _need_native(request: pytest.FixtureRequest) -> None:
    """Skip every parity test when the native library is not built."""
    if request.node.originalname == "test_native_built_in_ci":
        return
    native = pytest.importorskip(NATIVE_MODULE)
    if not native.available():
        pytest.skip("native ATIF library not built (evalkit.load.steps.native.available())")


def test_native_built_in_ci() -> None:
    """CI sets EVALKIT_REQUIRE_NATIVE=1: the parity tests must not silently skip there."""
    required = os.environ.get("EVALKIT_REQUIRE_NATIVE") == "1"
    try:
        import evalkit.load.steps.native as native
    except ImportError as e:
        if required:
            pytest.fail(f"EVALKIT_REQUIRE_NATIVE=1 but {NATIVE_MODULE} does not import: {e}")
        pytest.skip(f"{NATIVE_MODULE} not importable: {e}")
    if not native.available():
        if required:
            pytest.fail("EVALKIT_REQUIRE_NATIVE=1 but the native ATIF library is not available")
        pytest.skip("native ATIF library not built")


@contextlib.contextmanager
def _env(name: str, value: str | None) -> Iterator[None]:
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _build(trials: pl.DataFrame, native: str) -> Any:
    with _env("EVALKIT_NATIVE", native):
        return build_trajectories(trials, cache=False, progress=False)


def _errors(errs: list[LoadError]) -> list[tuple]:
    return sorted((tuple(getattr(e, f) for f in ERROR_FIELDS) for e in errs), key=repr)


def _as_text(df: pl.DataFrame) -> pl.DataFrame:
    """Float columns as text (tells -0.0 from 0.0, which equality does not)."""
    return df.with_columns(pl.col(pl.Float32, pl.Float64).cast(pl.String))


def _show(a: Any, b: Any) -> str:
    """Two differing values, long strings cut around their first difference."""
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) > 160:
        i = next(
            (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        lo = max(0, i - 40)
        return (
            f"(len {len(a)} vs {len(b)}, first difference at {i}) "
            f"python=...{a[lo : i + 80]!r}... native=...{b[lo : i + 80]!r}..."
        )
    return f"python={a!r} native={b!r}"


def _describe(name: str, py: pl.DataFrame, nat: pl.DataFrame) -> str:
    """The first differences of two frames, readable (for the assertion message)."""
    if py.schema != nat.schema:
        return f"{name}: schema python={dict(py.schema)} native={dict(nat.schema)}"
    if py.height != nat.height:
        return f"{name}: height python={py.height} native={nat.height}"
    key = [c for c in ("trial_id", "trajectory", "step_index", "call_index") if c in py.columns]
    out = []
    a, b = _as_text(py), _as_text(nat)
    for c in py.columns:
        diff = a.select(~pl.col(c).eq_missing(b[c]).alias("d"))["d"]
        rows = diff.arg_true().to_list()
        for r in rows[:3]:
            where = {k: py[k][r] for k in key}
            out.append(f"{name}.{c} row {r} {where}: {_show(py[c][r], nat[c][r])}")
        if len(rows) > 3:
            out.append(f"{name}.{c}: {len(rows)} rows differ")
    return "\n".join(out) or f"{name}: equal values, other difference"


def both(trials: pl.DataFrame) -> Any:
    """Build with EVALKIT_NATIVE=0 and =1; assert the frames and errors are identical."""
    py = _build(trials, "0")
    nat = _build(trials, "1")
    problems = []
    for name in FRAMES:
        a, b = getattr(py, name), getattr(nat, name)
        try:
            assert_frame_equal(a, b, check_exact=True)
            assert_frame_equal(_as_text(a), _as_text(b), check_exact=True)
        except AssertionError:
            problems.append(_describe(name, a, b))
    ep, en = _errors(py.errors), _errors(nat.errors)
    if ep != en:
        only_p = [e for e in ep if e not in en]
        only_n = [e for e in en if e not in ep]
        problems.append(f"errors: only python={only_p} only native={only_n}")
    assert not problems, "native != python:\n" + "\n".join(problems)
    return py


def _with_deadline(fn: Callable[[], Any]) -> Any:
    return with_deadline(fn, DEADLINE_S, "build_trajectories")


def _trials(dirs: list[Path], **cols: Any) -> pl.DataFrame:
    return trials_frame(dirs, **cols)


# -- real data -------------------------------------------------------------------------------


def test_harbor_fixture_trials() -> None:
    import evalkit.load

    trials = evalkit.load(str(HARBOR), cache=False, progress=False).trials
    assert trials.height > 10
    tf = both(trials)
    assert tf.steps.height > 0


def test_frames_imported_without_polars_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """arrow_c._from_stream (Polars' PyCapsule import without pl.DataFrame's dispatch) gives
    the frames pl.DataFrame gives."""
    import evalkit.load
    from evalkit.load.steps import arrow_c, native

    if not native.enabled():
        pytest.skip("compiled extractor not built")
    assert arrow_c._from_stream is not pl.DataFrame  # the internals are found
    trials = evalkit.load(str(HARBOR), cache=False, progress=False).trials
    fast = build_trajectories(trials, cache=False, progress=False)
    monkeypatch.setattr(arrow_c, "_from_stream", pl.DataFrame)
    slow = build_trajectories(trials, cache=False, progress=False)
    for name in FRAMES:
        assert_frame_equal(getattr(fast, name), getattr(slow, name))


def test_a_started_parse_finished_once_or_dropped(tmp_path: Path) -> None:
    """native.start / Pending.finish: the result is the one of native.parse; a second
    finish is refused; a parse started and never finished is finished and freed when the
    Pending is collected (its threads are not left working for nobody)."""
    import gc

    from evalkit.load.steps import native

    if not native.enabled():
        pytest.skip("compiled extractor not built")
    dirs = [str(d) for d in _edge_dirs(tmp_path, ["basic", "empty", "continuation_chain"])]
    p = native.start(dirs, 1 << 30, threads=2)
    res = p.finish()
    assert res.rows(native.TRIALS) == 3
    with pytest.raises(RuntimeError, match="already finished"):
        p.finish()
    for _ in range(20):
        native.start(dirs, 1 << 30, threads=2)  # dropped at once
    gc.collect()
    again = native.parse(dirs, 1 << 30, threads=2)
    lay = native.raw_layout(native.STEP_COLS)
    assert_frame_equal(res.frame(native.STEPS, lay), again.frame(native.STEPS, lay))


def lay_out(root: Path) -> pl.DataFrame:
    """The ATIF fixture tree as trial folders (bench_trajectories.lay_out, rep=1): each main
    trajectory as agent/trajectory.json with its continuation / summarization siblings."""
    mains = fixture_mains()
    dirs = []
    for i, files in enumerate(mains):
        td = root / f"job{i % 3}" / f"trial{i}"
        (td / "agent").mkdir(parents=True)
        for src, name in files:
            shutil.copy(src, td / "agent" / name)
        dirs.append(td)
    return _trials(dirs)


def test_atif_fixture_tree(tmp_path: Path) -> None:
    tf = both(lay_out(tmp_path))
    assert tf.steps["trajectory"].n_unique() > 1


def test_every_fixture_file_alone_as_a_trajectory(tmp_path: Path) -> None:
    """Each file of tests/fixtures/atif (native formats, traces, continuations, JSONL,
    SOURCES.md included) as a trial's only agent/trajectory.json."""
    dirs = []
    for i, f in enumerate(sorted(p for p in ATIF.rglob("*") if p.is_file())):
        td = tmp_path / "job" / f"t{i:03d}"
        (td / "agent").mkdir(parents=True)
        shutil.copy(f, td / "agent" / "trajectory.json")
        dirs.append(td)
    # goose stream-json logs next to no trajectory: n_turns from the log
    for f in sorted((ATIF / "native").rglob("*.jsonl")):
        td = tmp_path / "job" / f"goose-{f.stem}"
        (td / "agent").mkdir(parents=True)
        shutil.copy(f, td / "agent" / "goose.txt")
        dirs.append(td)
    both(_trials(dirs, agent_name=["goose"] * len(dirs)))


def test_fuzz_seed_tree() -> None:
    import evalkit.load
    from tests.fuzz.corpus import template

    trials = evalkit.load(str(template()), cache=False, progress=False).trials
    both(trials)


def _crashers() -> list[Path]:
    from tests.fuzz.crashers import load_crasher, stored

    out = []
    for d in stored():
        _, ops = load_crasher(d)
        # only cases that touch trial folders' files or the environment; 'deny' rules patch
        # Python's os functions, which the compiled reader does not go through: dropped
        if any(
            o["op"] == "env" or "/agent" in o.get("path", "") or o["op"] == "symlink" for o in ops
        ):
            out.append(d)
    return out


CRASHERS = _crashers()


@pytest.mark.parametrize("case_dir", CRASHERS, ids=[p.name for p in CRASHERS])
def test_fuzz_crashers(case_dir: Path, tmp_path: Path) -> None:
    import evalkit.load
    from tests.fuzz.check import prepare
    from tests.fuzz.crashers import load_crasher
    from tests.fuzz.mutate import apply

    _, ops = load_crasher(case_dir)
    ops = [o for o in ops if o["op"] != "deny"]
    root = prepare(ops, tmp_path)
    env, _ = apply(ops, root)
    with contextlib.ExitStack() as stack:
        for k, v in env.items():
            stack.enter_context(_env(k, v))
        trials = evalkit.load(str(root), cache=False, progress=False).trials
        _with_deadline(lambda: both(trials))


# -- hand-written edge files -----------------------------------------------------------------


def _doc(steps: Any, version: Any = "ATIF-v1.6", **root: Any) -> dict:
    d: dict = {
        "schema_version": version,
        "session_id": "s",
        "agent": {"name": "a", "model_name": "m"},
    }
    d["steps"] = steps
    d.update(root)
    if version is None:
        del d["schema_version"]
    return d


def _step(i: int, text: str = "hi", **kw: Any) -> dict:
    s = {
        "step_id": i,
        "source": "agent",
        "message": text,
        "timestamp": f"2025-01-01T00:00:0{i % 10}Z",
    }
    s.update(kw)
    return s


def _call_step(i: int, cmd: str, out: str, **kw: Any) -> dict:
    return _step(
        i,
        tool_calls=[
            {"tool_call_id": f"c{i}", "function_name": "bash", "arguments": {"command": cmd}}
        ],
        observation={"results": [{"source_call_id": f"c{i}", "content": out}]},
        **kw,
    )


def _ref_step(i: int, ref: dict | list) -> dict:
    return _step(i, observation={"results": [{"content": "sub", "subagent_trajectory_ref": ref}]})


def _j(obj: Any) -> bytes:
    return orjson.dumps(obj)


BASIC = _j(_doc([_step(1, source="user"), _call_step(2, "ls", "a\nb"), _step(3, "done")]))
SUB = _doc([_call_step(1, "pwd", "/"), _step(2, "sub done")], trajectory_id="sub")

EDGE_NUMBERS = (
    b'{"schema_version":"ATIF-v1.1","agent":{"name":"a"},"steps":[{"step_id":1E0,"source":"agent",'
    b'"metrics":{"prompt_tokens":1.0e2,"completion_tokens":-0,"cached_tokens":5E+0,"cost_usd":1e-7},'
    b'"extra":{"a":1E16,"b":0.0000001,"c":-0.0,"d":123456789.0,"e":1e15,"f":0.1,"g":18446744073709551615,'
    b'"h":18446744073709551616,"i":-9223372036854775809,"j":5e-324,"k":1.7976931348623157e308,'
    b'"l":2.5E-5,"m":100000000000000000000000,"n":1e22,"o":1e21,"p":0.30000000000000004}}],'
    b'"final_metrics":{"total_prompt_tokens":1e2,"total_cached_tokens":7,"total_cost_usd":0.5}}'
)

#: name -> {trial-relative path: bytes | dict | "fifo" | ("symlink", target) | "dir"}
# fmt: off
EDGES: dict[str, dict[str, Any]] = {
    "basic": {"agent/trajectory.json": BASIC},
    "empty": {"agent/trajectory.json": b""},
    "whitespace_only": {"agent/trajectory.json": b" \n\t "},
    "invalid_json": {"agent/trajectory.json": b'{"schema_version": "ATIF-v1.6", "steps": [}'},
    "truncated": {"agent/trajectory.json": BASIC[:len(BASIC) // 2]},
    "json_list_episode_log": {
        "agent/trajectory.json": b'[{"episode": 0, "prompt": "p", "response": "r"}]',
    },
    "json_list_command_log": {
        "agent/trajectory.json": b'[{"command": "ls", "output": "", "return_code": 0}]',
    },
    "json_list_empty": {"agent/trajectory.json": b"[]"},
    "json_list_scalars": {"agent/trajectory.json": b"[1, 2]"},
    "json_scalar": {"agent/trajectory.json": b"42"},
    "json_string": {"agent/trajectory.json": b'"ATIF-v1.6"'},
    "json_null": {"agent/trajectory.json": b"null"},
    "jsonl": {"agent/trajectory.json": b'{"type": "a"}\n{"type": "b"}\n'},
    "object_not_atif": {"agent/trajectory.json": b'{"foo": 1, "bar": 2}'},
    "object_no_keys": {"agent/trajectory.json": b"{}"},
    "bom": {"agent/trajectory.json": b"\xef\xbb\xbf" + BASIC},
    "nan_literal": {
        "agent/trajectory.json": BASIC.replace(b'"done"', b'"done","extra":{"x":NaN,"y":Infinity,"z":-Infinity}'),
    },
    "nan_metrics": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","metrics":{"prompt_tokens":NaN,"cost_usd":Infinity}}],"final_metrics":{"total_cost_usd":NaN,"total_prompt_tokens":Infinity}}',
    },
    "nan_and_big_int": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","step_id":18446744073709551616,"message":{"n":18446744073709551616,"f":NaN},"extra":{"big":99999999999999999999999}}]}',
    },
    "duplicate_steps_key": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"user","message":"first"}],"steps":[{"source":"agent","message":"second"},{"source":"agent"}]}',
    },
    "duplicate_keys_nested": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{"model_name":"x","model_name":"y"},"steps":[{"source":"agent","message":"a","message":"b","extra":{"k":1,"j":2,"k":3},"metrics":{"prompt_tokens":1,"prompt_tokens":2}}]}',
    },
    "duplicate_version": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.0","schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","metrics":{"prompt_tokens":5,"cached_tokens":3}}]}',
    },
    "huge_exponent": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","step_id":1e400,"metrics":{"prompt_tokens":1e400,"cost_usd":-1e400},"extra":{"x":1e400}}],"final_metrics":{"total_prompt_tokens":1e400}}',
    },
    "numbers": {"agent/trajectory.json": EDGE_NUMBERS},
    "deep_nesting": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","extra":' + b"[" * 2000 + b"]" * 2000 + b"}]}",
    },
    "deep_nesting_200": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","extra":' + b'{"a":' * 200 + b"1" + b"}" * 200 + b"}]}",
    },
    "lone_surrogate": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"a\\ud800b","extra":{"\\udfff":"\\ud83d"}}]}',
    },
    "surrogate_pair_escape": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\\ud83d\\ude42 \\u00e9\\/\\u0000"}]}',
    },
    "invalid_utf8": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\xff\xfe"}]}',
    },
    "overlong_utf8": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\xc0\xaf"}]}',
    },
    "control_chars_raw": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"a\x01b"}]}',
    },
    "trailing_garbage": {"agent/trajectory.json": BASIC + b" x"},
    "trailing_comma": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[],}',
    },
    "version_missing": {"agent/trajectory.json": _j(_doc([_step(1)], version=None))},
    "version_null_no_agent": {
        "agent/trajectory.json": b'{"schema_version":null,"steps":[{"source":"agent"}]}',
    },
    "version_int": {"agent/trajectory.json": _j(_doc([_step(1)], version=5))},
    "version_v10_cached": {
        "agent/trajectory.json": _j(_doc([_step(1, metrics={"prompt_tokens": 2 ** 63 - 1, "cached_tokens": 1}), _step(2, metrics={"prompt_tokens": 10, "cached_tokens": 0}), _step(3, metrics={"prompt_tokens": None, "cached_tokens": 4})], version="ATIF-v1.0", final_metrics={"total_prompt_tokens": 10, "total_cached_tokens": 5})),
    },
    "version_prefix_only": {"agent/trajectory.json": _j(_doc([_step(1)], version="ATIF-"))},
    "version_trailing": {
        "agent/trajectory.json": _j(_doc([_step(1, metrics={"prompt_tokens": 1, "cached_tokens": 2})], version="ATIF-v1.1-rc1")),
    },
    "steps_not_list": {"agent/trajectory.json": _j(_doc({"0": _step(1)}))},
    "bad_steps": {"agent/trajectory.json": _j(_doc([1, None, "x", _step(1), [], True]))},
    "continuation_chain": {
        "agent/trajectory.json": _j(_doc([_step(1), _call_step(2, "ls", "x")], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(1, is_copied_context=True), _step(3)], continued_trajectory_ref="trajectory.cont-2.json", final_metrics={"total_prompt_tokens": 3})),
        "agent/trajectory.cont-2.json": _j(_doc([_call_step(4, "pwd", "/")], final_metrics={"total_prompt_tokens": 7, "total_cost_usd": 0.25})),
    },
    "continuation_abs_ref": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="/logs/agent/trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
    },
    "continuation_missing": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-9.json")),
    },
    "continuation_escape": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="../trajectory.json")),
    },
    "continuation_cycle": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(2)], continued_trajectory_ref="trajectory.json")),
    },
    "continuation_self": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.json")),
    },
    "continuation_bad": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": b"[1]",
    },
    "continuation_nul": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="a\x00b")),
    },
    "unlinked_continuations": {
        "agent/trajectory.json": BASIC,
        "agent/trajectory.cont-2.json": _j(_doc([_step(7)])),
        "agent/trajectory.cont-10.json": _j(_doc([_step(9)])),
        "agent/trajectory.cont-1.json": _j(_doc([_step(5)], final_metrics={"total_cost_usd": 1.5})),
        "agent/trajectory.cont-01.json": _j(_doc([_step(6)])),
        "agent/trajectory.cont-x.json": _j(_doc([_step(8)])),
    },
    "summarization_unreferenced": {
        "agent/trajectory.json": BASIC,
        "agent/trajectory.summarization-1-summary.json": _j(_doc([_step(1, "summary")])),
        "agent/trajectory.summarization-1-questions.json": _j(_doc([_step(1, "q")])),
        "agent/trajectory.summarization-2.json": b"not json",
        "agent/trajectory.summarization-3.txt": b"ignored",
    },
    "subagent_by_path": {
        "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, [{"trajectory_path": "sub.json", "trajectory_id": "worker"}, {"trajectory_path": "sub2.json"}])])),
        "agent/sub.json": _j(SUB),
        "agent/sub2.json": _j(_doc([_step(1)])),
    },
    "subagent_refs_odd": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "missing.json"}), _ref_step(2, {"session_id": "x"}), _ref_step(3, [{"trajectory_path": "/container/logs/sub.json"}, 5, "x"]), _ref_step(4, {"trajectory_path": "../../escape.json"}), _ref_step(5, {"trajectory_path": "sub.json"}), _ref_step(6, {"trajectory_path": "trajectory.json"}), _ref_step(7, {"trajectory_path": "bad.json"}), _ref_step(8, {"trajectory_path": "sub.json", "trajectory_id": ""})])),
        "agent/sub.json": _j(SUB),
        "agent/bad.json": b"{",
    },
    "subagent_embedded": {
        "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, {"trajectory_id": "emb1"}), _ref_step(3, {"trajectory_id": "nope"})], subagent_trajectories=[_doc([_step(1, "e1")], trajectory_id="emb1"), _doc([_call_step(1, "echo x", "x")], session_id="sess2"), _doc([_step(1, "e3")]), _doc([_step(1, "e4")], trajectory_id="emb1"), {"not": "atif"}, 5])),
    },
    "subagent_nested_depth": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "s1.json"})])),
        **{f"agent/s{i}.json": _j(_doc([_ref_step(1, {"trajectory_path": f"s{i + 1}.json"})])) for i in range(1, 8)},
    },
    "subagent_label_clash": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, [{"trajectory_path": "a.json", "trajectory_id": "main"}, {"trajectory_path": "b.json", "trajectory_id": "main"}])])),
        "agent/a.json": _j(_doc([_step(1)])),
        "agent/b.json": _j(_doc([_step(1)])),
    },
    "multi_step": {
        "steps/b/agent/trajectory.json": _j(_doc([_step(1, timestamp="2025-01-01T00:00:00Z")])),
        "steps/a/agent/trajectory.json": _j(_doc([_call_step(1, "ls", "x", timestamp="2025-01-02T00:00:00Z")], final_metrics={"total_prompt_tokens": 4})),
        "steps/c/agent/trajectory.json": _j(_doc([_step(1, timestamp="2025-01-01T12:00:00Z")], continued_trajectory_ref="trajectory.cont-1.json", final_metrics={"total_prompt_tokens": 1})),
        "steps/c/agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
        "steps/d/agent/not-a-trajectory.json": b"{}",
    },
    "multi_step_and_main": {
        "agent/trajectory.json": BASIC,
        "steps/x/agent/trajectory.json": _j(_doc([_step(1, timestamp=None)])),
        "steps/y/agent/trajectory.json": _j(_doc([_step(1)])),
        "steps/z/agent/trajectory.json": b"",
    },
    "multi_step_bad_ts": {
        "steps/a/agent/trajectory.json": _j(_doc([_step(1, timestamp=5)])),
        "steps/b/agent/trajectory.json": _j(_doc([_step(1, timestamp="2020-01-01T00:00:00Z")])),
    },
    "fifo": {"agent/trajectory.json": "fifo"},
    "fifo_continuation": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": "fifo",
    },
    "fifo_subagent": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "sub.json"})])),
        "agent/sub.json": "fifo",
        "agent/trajectory.summarization-1-summary.json": "fifo",
    },
    "fifo_multi_step": {
        "steps/a/agent/trajectory.json": "fifo",
        "steps/b/agent/trajectory.json": BASIC,
    },
    "symlink_loop": {"agent/trajectory.json": ("symlink", "trajectory.json")},
    "symlink_pair_loop": {
        "agent/trajectory.json": ("symlink", "other.json"),
        "agent/other.json": ("symlink", "trajectory.json"),
    },
    "symlink_dangling": {"agent/trajectory.json": ("symlink", "nowhere.json")},
    "symlink_ok": {"agent/real.json": BASIC, "agent/trajectory.json": ("symlink", "real.json")},
    "symlink_agent_dir_loop": {"agent": ("symlink", "agent")},
    "directory_named_trajectory": {"agent/trajectory.json/x": b"{}"},
    "agent_is_a_file": {"agent": b"{}"},
    "goose_log": {
        "agent/goose.txt": b'{"type":"message","message":{"id":"m1","role":"assistant"}}\n{"type":"message","message":{"id":"m1","role":"assistant"}}\n{"type":"message","message":{"id":"m2","role":"assistant"}}\n',
    },
    "goose_and_trajectory": {
        "agent/goose.txt": b'{"type":"message","message":{"id":"m1","role":"assistant"}}\n',
        "agent/trajectory.json": BASIC,
    },
    "no_agent_folder": {"verifier/reward.txt": b"1"},
    "empty_agent_folder": {"agent/.keep": b""},
}
# fmt: on


def _nested(depth: int, leaf: Any, key: str = "a") -> Any:
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


LEAF = {
    "f": 1e16,
    "g": 0.1,
    "s": 'it\'s "q"',
    "n": None,
    "t": True,
    "i": 2**63,
    "l": [1.5, "é", -0.0],
}
# fmt: off
ODD_REFS = [
    "it's.json", 'a"b.json', "x\x1cy.json", "\u2028.json", "日本.json", "tab\t.json", 'both\'".json',
    "b\\s.json", "\x7f.json",
]
# fmt: on


def _deep_list(depth: int) -> list:
    v: list = []
    for _ in range(depth):
        v = [v, 0.5]
    return v


def _deep_json(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


def _deep_field(field: str, depth: int) -> bytes:
    """A step whose ``field`` nests ``depth + 2`` levels (LEAF holds a list): orjson.dumps
    gives up at 255 levels, and the Python path then writes str(value), the Python repr."""
    return _deep_json(_doc([_step(1, **{field: _nested(depth, LEAF)})]))


def _padded(depth: int) -> bytes:
    """A document nesting ``depth`` levels in all (orjson reads up to 1024)."""
    head = b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"m"}],"x_pad":'
    return head + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# fmt: off
EDGES.update(
    {
        **{f"depth_{f}_{d}": {"agent/trajectory.json": _deep_field(f, d)} for f in ("extra", "message", "reasoning_content") for d in (252, 253, 300)},
        "depth_arguments_300": {
            "agent/trajectory.json": _deep_json(_doc([_step(1, tool_calls=[{"tool_call_id": "c", "function_name": "bash", "arguments": _nested(300, LEAF)}])])),
        },
        "depth_list_300": {
            "agent/trajectory.json": _deep_json(_doc([_step(1, extra=[["x", 1e+22], _deep_list(299)])])),
        },
        "depth_document_1024": {"agent/trajectory.json": _padded(1024)},
        "depth_document_1025": {"agent/trajectory.json": _padded(1025)},
        **{f"continuation_ref_odd_{i}": {"agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref=r))} for i, r in enumerate(ODD_REFS)},
        "continuation_ref_dotted": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="./x/../trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json": _j(_doc([_step(2)], continued_trajectory_ref="trajectory.cont-2.json/")),
            "agent/trajectory.cont-2.json": _j(_doc([_step(3)], continued_trajectory_ref="../agent/trajectory.cont-3.json")),
            "agent/trajectory.cont-3.json": _j(_doc([_step(4)], continued_trajectory_ref=".")),
        },
        "continuation_ref_root": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="/")),
        },
        "continuation_ref_symlink": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="link.json")),
            "agent/link.json": ("symlink", "trajectory.json"),
        },
        "continuation_ref_dir": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json/x": b"{}",
        },
        "unlinked_continuation_odd_numbers": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.cont-99999999999999999999.json": _j(_doc([_step(8)])),
            "agent/trajectory.cont-١.json": _j(_doc([_step(9)])),
            "agent/trajectory.cont-2.json": _j(_doc([_step(7)])),
            "agent/trajectory.cont-0.json": _j(_doc([_step(6)])),
            "agent/trajectory.cont-3.json": b"[]",
        },
        "subagent_refs_paths": {
            "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, [{"trajectory_path": r} for r in ["./sub.json", "sub.json/", "x/../sub.json", "../agent/sub.json", "./trajectory.json", "", ".", "..", "/", "/abs/dir/sub2.json", "link.json", *ODD_REFS]])])),
            "agent/sub.json": _j(SUB),
            "agent/sub2.json": _j(_doc([_step(1, "two")])),
            "agent/link.json": ("symlink", "trajectory.json"),
        },
        "subagent_labels": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, [{"trajectory_path": f"s{i}.json", "trajectory_id": t} for i, t in enumerate(["x", "x", "x#2", "main", "", "it's", "x"])])])),
            **{f"agent/s{i}.json": _j(_doc([_step(1, f"s{i}")])) for i in range(7)},
            "agent/trajectory.summarization-1-summary.json": _j(_doc([_step(1, "sum")])),
            "agent/trajectory.summarization-.json": _j(_doc([_step(1, "sum2")])),
        },
        "subagent_cycle": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "a.json"})])),
            "agent/a.json": _j(_doc([_ref_step(1, {"trajectory_path": "b.json"})])),
            "agent/b.json": _j(_doc([_ref_step(1, [{"trajectory_path": "a.json"}, {"trajectory_path": "trajectory.json"}])])),
        },
        "subagent_with_continuation": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "sub.json"})], continued_trajectory_ref="trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
            "agent/sub.json": _j(_doc([_step(1)], continued_trajectory_ref="sub.cont.json", final_metrics={"total_prompt_tokens": 99})),
            "agent/sub.cont.json": _j(_doc([_ref_step(1, {"trajectory_path": "trajectory.cont-1.json"})])),
        },
        "summarization_dir": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.summarization-1-x.json/y": b"{}",
            "agent/trajectory.summarization-2-x.json": ("symlink", "nowhere"),
        },
    }
)
# fmt: on


def _calls_doc(calls: list[tuple[Any, Any, Any]]) -> bytes:
    """One agent step per (function_name, arguments, extra) call, each with an observation."""
    steps = []
    for i, (fn, args, extra) in enumerate(calls):
        c: dict = {"tool_call_id": f"c{i}", "function_name": fn, "arguments": args}
        if extra is not None:
            c["extra"] = extra
        steps.append(
            _step(
                i,
                tool_calls=[c],
                observation={"results": [{"source_call_id": f"c{i}", "content": "out"}]},
            )
        )
    return _j(_doc(steps))


# fmt: off
WS = [
    "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680", "\u180e", "\u2000", "\u200b",
    "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\x0b", "\x0c", "\r", "\t",
]
# fmt: on
# fmt: off
EDGES.update(
    {
        "unicode_tool_names": {
            "agent/trajectory.json": _calls_doc([(n, {"command": "ls"}, None) for n in ["TMUX_SEND_KEYS", "ＢＡＳＨ", "BAİSH", "bash\u200b", "Ba sh", "Ba-_sh", "a/b:c.d__run", "mcp__x__", "bash/", "x.EXEC", "İ", ""]]),
        },
        "unicode_status": {
            "agent/trajectory.json": _calls_doc([("read", {}, {"status": v}) for v in ["OK", "ERROR", "Faİled", "İ", "SUCCEEDED", "ok ", "errored"]]),
        },
        "unicode_whitespace_commands": {
            "agent/trajectory.json": _calls_doc([("bash", {"command": f"ls{w}"}, None) for w in WS] + [("bash", {"command": f"\n\n{w}ls"}, None) for w in WS] + [("x", {"keystrokes": [{"keystrokes": w}, {"keystrokes": f"a{w}"}]}, None) for w in WS]),
        },
        "ignored_siblings": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.foo.json": b"garbage",
            "agent/trajectory..json": b"[",
            "agent/trajectory.cont-1.json.bak": b"{",
            "agent/trajectory.cont-.json": _j(_doc([_step(5)])),
            "agent/trajectory.summarization-1.txt": b"x",
            "agent/trajectory.zzz.json": "fifo",
            "agent/trajectory.dir.json/x": b"{}",
            "agent/Trajectory.json": b"{",
            "agent/trajectory.JSON": b"{",
            "agent/other.json": b"{",
        },
        "float_ties": {
            "agent/trajectory.json": _j(_doc([_step(1, extra={"v": [2.0 ** 49 + 0.25, 2.0 ** 49 + 0.75, 2.0 ** 49 + 1.25, 670597701678940.2, 2.0 ** 50 + 0.5]}, message={"m": 2.0 ** 49 + 0.25}, tool_calls=[{"tool_call_id": "c", "function_name": "x", "arguments": {"f": 2.0 ** 49 + 1.25}}])])),
        },
        "shlex_lists": {
            "agent/trajectory.json": _calls_doc([("bash", {"command": v}, None) for v in [["a b", "it's", ""], ["é", "a\tb", "$x", "a*b", "@%+=:,./-_", "~x", "a\x00b"], ["bash", "-lc", "  ls  \n"], ["/bin/zsh", "-cl", ""], ["bash", "-x", "ls"], ["bash"], ["sh", "-c", "a", "b"], []]]),
        },
    }
)
# fmt: on


def _materialise(td: Path, files: dict[str, Any]) -> None:
    td.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = td / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "fifo":
            os.mkfifo(p)
        elif isinstance(content, tuple) and content[0] == "symlink":
            os.symlink(content[1], p)
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(orjson.dumps(content))


def _edge_dirs(root: Path, names: list[str]) -> list[Path]:
    dirs = []
    for name in names:
        td = root / "job" / name
        _materialise(td, EDGES[name])
        dirs.append(td)
    return dirs


def test_edge_files(tmp_path: Path) -> None:
    """Every edge file as a trial, all in one batch (token columns set, so metrics_mismatch
    is computed); on a difference, each trial alone, to name the files that differ."""
    dirs = _edge_dirs(tmp_path, sorted(EDGES))
    n = len(dirs)
    tok = [(None, 100, 0, 7, 2**62)[i % 5] for i in range(n + 2)]
    trials = _trials(
        dirs,
        n_input_tokens=tok[:n],
        n_output_tokens=tok[1 : n + 1],
        n_cache_tokens=tok[2 : n + 2],
        cost_usd=[(None, 0.25, 1.5)[i % 3] for i in range(n)],
    )
    try:
        _with_deadline(lambda: both(trials))
    except AssertionError as batch:
        alone = []
        for d in dirs:
            try:
                _with_deadline(lambda d=d: both(_trials([d])))
            except AssertionError as e:
                alone.append(f"--- edge {d.name!r}: {e}")
        pytest.fail("\n".join(alone) if alone else f"only in the batch: {batch}", pytrace=False)


def test_continuation_file_limit(tmp_path: Path) -> None:
    """More files than the per-trial cap (500) in one continuation chain."""
    td = tmp_path / "job" / "long"
    files: dict[str, Any] = {
        "agent/trajectory.json": _j(
            _doc([_step(0)], continued_trajectory_ref="trajectory.cont-1.json")
        )
    }
    for i in range(1, 505):
        files[f"agent/trajectory.cont-{i}.json"] = _j(
            _doc([_step(i)], continued_trajectory_ref=f"trajectory.cont-{i + 1}.json")
        )
    _materialise(td, files)
    both(_trials([td]))


# fmt: off
SAMPLE = [
    "basic", "continuation_chain", "empty", "subagent_by_path", "bad_steps", "multi_step", "jsonl",
    "unlinked_continuations", "no_agent_folder", "goose_log",
]
# fmt: on


def test_trials_frame_variants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only trial_id / trial_dir given (job_id null), a trailing slash, a relative path, a
    trial folder that is missing / a file / a symlink / named with spaces, quotes and
    non-ASCII letters, one folder under two trial ids, duplicate trial ids, a non-Harbor
    row."""
    dirs = _edge_dirs(tmp_path, SAMPLE)
    odd = tmp_path / "jöb x" / "tríal 'q' \u2028\x1c"
    for name in ("subagent_refs_odd", "continuation_missing", "symlink_loop", "empty"):
        _materialise(odd / f"odd-{name}", EDGES[name])
    dirs += sorted(odd.iterdir())
    (tmp_path / "job" / "a-file").write_bytes(b"x")
    (tmp_path / "job" / "linked").symlink_to(dirs[1])
    monkeypatch.chdir(tmp_path)
    rows = [(d.name, str(d)) for d in dirs] + [
        ("slash", str(dirs[0]) + "/"),
        ("relative", os.path.relpath(dirs[3], tmp_path)),
        ("dotted", str(tmp_path / "job" / "." / "x" / ".." / dirs[4].name)),
        ("missing", str(tmp_path / "job" / "nope")),
        ("a-file", str(tmp_path / "job" / "a-file")),
        ("linked", str(tmp_path / "job" / "linked")),
        ("again", str(dirs[1])),
        ("basic", str(dirs[2])),  # duplicate id: the first row wins
    ]
    both(pl.DataFrame(rows, schema=["trial_id", "trial_dir"], orient="row"))
    fmt = ["harbor"] * len(rows)
    fmt[0] = "go-code"
    both(
        pl.DataFrame(
            [(*r, f, None) for r, f in zip(rows, fmt, strict=True)],
            schema={
                "trial_id": pl.String,
                "trial_dir": pl.String,
                "source_format": pl.String,
                "job_id": pl.String,
            },
            orient="row",
        )
    )


def test_many_trials_in_small_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many trials (several extractor threads), and, when the batch module groups trials,
    groups of 7 so that native and Python trials interleave across group borders."""
    names = sorted(EDGES)
    root = tmp_path
    dirs = []
    for rep in range(3):
        for name in names:
            if EDGES[name].get("agent/trajectory.json") == "fifo":
                continue
            td = root / f"job{rep}" / f"{name}-{rep}"
            _materialise(td, EDGES[name])
            dirs.append(td)
    trials = _trials(dirs)
    both(trials)
    try:
        from evalkit.load.steps import batch
    except ImportError:
        return
    if hasattr(batch, "GROUP"):
        monkeypatch.setattr(batch, "GROUP", 7)
        both(trials)


#: Rows the extractor leaves to Polars, and a trial the Python path parses: in a batch
#: they add columns to the frames the extractor hands over (steps/batch.py ``_take``).
RARE = {
    "plain": {"agent/trajectory.json": _j(_doc([_call_step(1, "ls", "[exit_code] 0")]))},
    # a digit Polars' \\d matches that the port does not decide: Polars finishes the call
    "call_left": {"agent/trajectory.json": _j(_doc([_call_step(1, "ls", "[exit_code] \u0661")]))},
    # a year outside the port's 1970-2200: Polars parses the timestamp
    "timestamp_left": {
        "agent/trajectory.json": _j(
            _doc([_call_step(1, "ls", "ok", timestamp="2301-05-01T10:00:00+02:00")])
        )
    },
    "python_path": EDGES["multi_step"],
}


@pytest.mark.parametrize(
    "names",
    [["plain", "call_left"], ["plain", "timestamp_left"], ["call_left", "python_path"],
     ["timestamp_left", "python_path", "plain"], list(RARE)],
)  # fmt: skip
@pytest.mark.parametrize("non_ascii_ids", [False, True])
def test_rows_left_to_polars(names: list[str], non_ascii_ids: bool, tmp_path: Path) -> None:
    """Calls and timestamps the extractor leaves to Polars and Python-path trials, alone
    and mixed in a batch; trial ids ASCII or not (passed to the library as UTF-8)."""
    dirs = []
    for name in names:
        _materialise(tmp_path / "job" / name, RARE[name])
        dirs.append(tmp_path / "job" / name)
    trials = _trials(dirs)
    if non_ascii_ids:
        ids = [f"{d.name}-tríal \u2028✓" for d in dirs]
        trials = trials.with_columns(pl.Series("trial_id", ids, pl.String))
    tf = both(trials)
    assert tf.tool_calls.height >= len([n for n in names if n != "python_path"])
    assert tf.tool_calls["trial_id"].null_count() == 0
    for name, code in (("call_left", None), ("timestamp_left", None), ("plain", 0)):
        if name in names:
            row = tf.tool_calls.filter(pl.col("trial_id").str.starts_with(name))
            assert row["exit_code"].to_list() == [code]
            assert row["timestamp"].is_null().sum() == 0


def test_cache_written_and_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cache on, the index keeps the trials without data (the cache must know they
    were looked at): a batch mixing parsed, no-trajectory and Python-path trials, built both
    ways into separate caches, then read back from them."""
    names = ["basic", "empty", "multi_step", "goose_log", "jsonl", "no_agent_folder", "bad_steps"]
    dirs = _edge_dirs(tmp_path / "trees", names)
    trials = _trials(dirs).with_columns(pl.lit(str(tmp_path / "trees" / "job")).alias("job_dir"))
    got = {}
    for native in ("0", "1"):
        monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / f"cache{native}"))
        with _env("EVALKIT_NATIVE", native):
            first = build_trajectories(trials, cache=True, progress=False)
            again = build_trajectories(trials, cache=True, progress=False)
        assert any((tmp_path / f"cache{native}").rglob("*")), "nothing cached"
        for name in FRAMES:
            assert_frame_equal(getattr(first, name), getattr(again, name), check_exact=True)
        got[native] = first
    for name in FRAMES:
        assert_frame_equal(getattr(got["0"], name), getattr(got["1"], name), check_exact=True)
    assert _errors(got["0"].errors) == _errors(got["1"].errors)


@pytest.mark.parametrize("over", [0, 1, 5000])
def test_size_cap(over: int, tmp_path: Path) -> None:
    """EVALKIT_MAX_FILE_MB lowered: a main file at / over the cap, a continuation over it."""
    cap = int(float("0.001") * 1024 * 1024)
    body = _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json"))
    main = body[:-1] + b"," + b'"pad":"' + b"x" * (cap + over - len(body) - 9) + b'"}'
    assert len(main) == cap + over
    td = tmp_path / "job" / "cap"
    _materialise(
        td,
        {
            "agent/trajectory.json": main,
            "agent/trajectory.cont-1.json": _j(_doc([_step(2, "y" * 2000)])),
        },
    )
    td2 = tmp_path / "job" / "small"
    _materialise(td2, {"agent/trajectory.json": BASIC})
    with _env("EVALKIT_MAX_FILE_MB", "0.001"):
        both(_trials([td, td2]))


# -- Hypothesis: random ATIF-ish documents ---------------------------------------------------
#
# Weighted choices (``weighted``) keep most documents ATIF with steps, calls and matching
# observations, while every odd type still comes up; the common choice is listed first so
# that failures shrink towards it.

# fmt: off
SPECIAL_TEXT = [
    "", " ", "a b", "it's", "ls -la\n", "\n\necho hi  \n\n", "echo hi\r\n", "x\x1c", "\x1c", "\xa0",
    "\u2028cmd\u3000", "\x00", "\t", "é", "日本語", "🙂", "\ud800", "\\", '"q"', "a\nb",
    "Traceback (most recent call last)", "bash: foo: command not found", "[exit_code] 2",
    "Exit Code: 1", "<exit_code>3</exit_code>", "Process exited with code 0", "Error: boom",
    '{"success": false, "error": "x"}', '{"exit_code": 5}', '  {"success": true}', "[image: x]",
    "2025-01-01T00:00:00Z", "ATIF-v1.6", "\x7f", "\ufeff", "\U0010ffff", "á", "ls\x1d\x1e\x1f",
    "ls \x85", "x\u180e", "x\u200b", "\u1680ls\u202f\u205f", "\x0b\x0c", "\u2029", "cmd\n\u3000\n",
]
# fmt: on
# fmt: off
SPECIAL_INTS = [
    0, 1, -1, 7, 2 ** 31, 2 ** 53 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, -2 ** 63, -2 ** 63 - 1,
    2 ** 64, 10 ** 30,
]
# fmt: on
# fmt: off
SPECIAL_FLOATS = [
    0.0, -0.0, 3.0, 3.5, 0.1, 1e-7, 1e-5, 1e-4, 2.5e-5, 1.5, -2.0, 123456.789, 123456789.0,
    1e15, 1e16, 1e17, 1e21, 1e22, 1e308, -1e308, 5e-324, 4.2e-310, 9007199254740993.0,
    0.30000000000000004, 2.0**63, -(2.0**63), 2.0**64,
    # exact ties at the 16th digit (the shortest repr rounds half to even)
    2.0**49 + 0.25, 2.0**49 + 1.25, 670597701678940.25,
]
# fmt: on
NONFINITE = [float("nan"), float("inf"), float("-inf")]


def pick(draw: st.DrawFn, *choices: tuple[int, st.SearchStrategy]) -> Any:
    """Draw from one of ``choices`` (weight, strategy), by weight."""
    k = draw(st.integers(0, sum(w for w, _ in choices) - 1))
    for w, strat in choices:
        if k < w:
            return draw(strat)
        k -= w
    raise AssertionError


def weighted(*choices: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    return st.composite(lambda draw: pick(draw, *choices))()


def chance(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (shrinks to False)."""
    return draw(st.integers(0, one_in - 1)) == one_in - 1


text = weighted((3, st.sampled_from(SPECIAL_TEXT)), (1, st.text(max_size=5)))
ints = weighted((4, st.integers(-5, 5000)), (2, st.sampled_from(SPECIAL_INTS)))
floats = weighted(
    (3, st.sampled_from(SPECIAL_FLOATS)), (2, st.floats(allow_nan=False, allow_infinity=False))
)
number = weighted(
    (5, st.integers(0, 5000)),
    (2, st.sampled_from(SPECIAL_INTS)),
    (3, floats),
    (1, st.sampled_from([True, False, None, *NONFINITE])),
)
scalar = st.one_of(st.none(), st.booleans(), ints, floats, text)
KEYS = ["a", "b", "", "type", "text", "source", "path", "is_error", "exit_code", "é", "\x00"]
small_json = st.recursive(
    scalar,
    lambda k: st.one_of(
        st.lists(k, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=3)), k, max_size=3),
    ),
    max_leaves=5,
)

# fmt: off
SIG_KEYS = [
    "is_error", "isError", "success", "error", "status", "exit_code", "exitCode", "return_code",
    "returncode", "exit_status", "exitStatus", "other",
]
# fmt: on
NEST_KEYS = ["tool_result_metadata", "metadata", "raw_tool_result", "tool_use_result", "result"]
# fmt: off
STATUS = [
    "error", "failed", "FAILURE", "ok", "Success", "succeeded", "errored", "running", "", "OK",
    "ERROR ", "faİled",
]
# fmt: on
sig_value = weighted(
    (3, st.booleans()),
    (3, st.integers(-2, 3)),
    (1, st.sampled_from(SPECIAL_INTS)),
    (2, st.sampled_from(STATUS)),
    (2, st.sampled_from([None, {}, [], ["x"], {"m": 1}, "boom", 0.0, 1.0, 2.5])),
)
sig_leaf = st.dictionaries(st.sampled_from(SIG_KEYS), sig_value, min_size=1, max_size=3)


def _nest(inner: st.SearchStrategy) -> st.SearchStrategy:
    sub = weighted((3, inner), (1, scalar))
    return st.tuples(
        st.dictionaries(st.sampled_from(SIG_KEYS), sig_value, max_size=2),
        st.dictionaries(st.sampled_from(NEST_KEYS), sub, max_size=2),
    ).map(lambda t: {**t[0], **t[1]})


sig_dict = weighted(  # up to three levels down: the last one is not read
    (3, sig_leaf),
    (2, _nest(sig_leaf)),
    (1, _nest(_nest(sig_leaf))),
    (1, _nest(_nest(_nest(sig_leaf)))),
)
extra = weighted(
    (2, st.sampled_from([{}, "", [], 0, "note", None, False, {"a": {}}, 0.0, -0.0, 1, "0"])),
    (
        2,
        st.dictionaries(
            st.sampled_from(["x", "y", "z", "é", ""]),
            st.sampled_from(SPECIAL_FLOATS + SPECIAL_INTS + NONFINITE),
            min_size=1,
            max_size=3,
        ),
    ),
    (2, small_json),
    (2, sig_dict),
)

source_dict = st.fixed_dictionaries(
    {},
    optional={
        "path": weighted(
            (4, text), (1, ints), (1, st.none()), (1, floats), (1, st.booleans()), (1, small_json)
        ),
        "url": st.one_of(text, st.none(), st.sampled_from(["", 0, False, [], 1.5])),
        "media_type": st.one_of(text, st.none(), ints),
    },
)
part = weighted(
    (3, text),
    (
        3,
        st.fixed_dictionaries(
            {"type": st.just("text")}, optional={"text": st.one_of(text, ints, st.none())}
        ),
    ),
    (
        3,
        st.fixed_dictionaries(
            {"type": st.sampled_from(["image", "audio", "video", "file"])},
            optional={"source": weighted((3, source_dict), (1, text), (1, st.none()))},
        ),
    ),
    (1, st.fixed_dictionaries({}, optional={"text": st.one_of(text, ints), "source": source_dict})),
    (
        1,
        st.fixed_dictionaries(
            {"type": st.one_of(st.none(), ints, text, st.booleans(), floats)},
            optional={"text": text, "source": source_dict},
        ),
    ),
    (1, st.one_of(ints, st.none(), st.booleans(), floats, st.lists(text, max_size=2))),
)
content = weighted(
    (6, text),
    (3, st.lists(part, max_size=4)),
    (1, st.none()),
    (1, small_json),
    (1, st.one_of(ints, st.booleans(), floats)),
)

ARG_KEYS = ["command", "cmd", "keystrokes", "script", "commands", "input", "path"]
# fmt: off
SHELL_FUNCTIONS = [
    "bash", "Bash", "mcp__srv__run_shell_command", "execute_command", "tmux-send-keys",
    "developer__shell", "a.b/run", "Run Shell", "RUN", "x:exec", "Shell-Command", "TMUX_SEND_KEYS",
    "mcp__a.b/c:Execute-Command",
]
# fmt: on
# fmt: off
OTHER_FUNCTIONS = [
    "str_replace_editor", "read_file", "", "bash2", "mcp__bash__read", None, 5, "ＢＡＳＨ",
    "bash\u200b", "bash/", "mcp__x__", "bȧsh",
]
# fmt: on
# fmt: off
LIST_ARGS = [
    ["bash", "-lc", "ls -la"], ["/bin/sh", "-c", "echo 'x'\n"], ["bash", "-c"],
    ["sh", "-lic", "a b"], ["a b", "it's", ""], [], ["", ""], ["zsh", "-cl", "  "],
    ["python3", "-c", "print(1)"], ["bash", "-lc", ["ls"]],
    ["echo", "$HOME", "a\nb", "é", "x\x00y"], ["/usr/bin/bash", "-ic", "\n\nls  \n"],
]
# fmt: on
keystroke_item = weighted(
    (4, st.fixed_dictionaries({"keystrokes": text}, optional={"duration": floats})),
    (
        1,
        st.fixed_dictionaries(
            {"keystrokes": st.one_of(ints, st.none(), st.lists(text, max_size=1))}
        ),
    ),
    (1, st.one_of(text, ints)),
)
arg_value = weighted(
    (6, text),
    (2, st.lists(text, max_size=4)),
    (2, st.sampled_from(LIST_ARGS)),
    (2, st.lists(keystroke_item, max_size=3)),
    (1, st.one_of(ints, st.none(), st.booleans(), floats, small_json)),
)
arguments = weighted(
    (6, st.dictionaries(st.sampled_from(ARG_KEYS), arg_value, max_size=3)),
    (1, text),
    (1, st.one_of(st.none(), st.lists(text, max_size=2), ints, small_json)),
)
call_id = weighted(
    (6, st.sampled_from(["c1", "c2", "c3"])), (1, st.one_of(ints, st.none(), st.just("")))
)
tool_call = st.fixed_dictionaries(
    {"tool_call_id": call_id},
    optional={
        "function_name": weighted(
            (3, st.sampled_from(SHELL_FUNCTIONS)), (1, st.sampled_from(OTHER_FUNCTIONS))
        ),
        "arguments": arguments,
        "extra": weighted((2, sig_dict), (1, extra)),
    },
)


@st.composite
def items(draw: st.DrawFn, item: st.SearchStrategy, max_size: int = 3, min_size: int = 0) -> list:
    """A list of mostly ``item`` with the odd scalar."""
    n = draw(st.integers(min_size, max_size))
    return [pick(draw, (9, item), (1, scalar)) for _ in range(n)]


tool_calls = weighted((6, items(tool_call)), (1, scalar))
result = st.fixed_dictionaries(
    {
        "source_call_id": weighted(
            (6, st.sampled_from(["c1", "c2", "c3"])),
            (1, st.sampled_from(["zz", ""])),
            (1, st.one_of(ints, st.none())),
        )
    },
    optional={"content": content, "extra": weighted((2, sig_dict), (1, extra))},
).map(lambda r: {k: v for k, v in r.items() if k != "source_call_id" or v is not None})
observation = weighted(
    (6, st.fixed_dictionaries({"results": items(result)})),
    (1, st.fixed_dictionaries({"results": scalar})),
    (1, st.sampled_from([{}, None, "obs", 3, []])),
)
# fmt: off
TIMESTAMPS = [
    "2025-01-02T03:04:05Z", "2025-01-02T03:04:05.123456+02:00", "2025-01-02T03:04:05",
    "2025-01-02 03:04:05", "2025-01-02T03:04:05.123456789Z", "2025-01-02T03:04:05-0700", "garbage",
    "", "2025-13-45T99:99:99Z", "2025-01-02", " 2025-01-02T03:04:05Z", 5, None, 1.5,
]
# fmt: on
metrics = weighted(
    (
        5,
        st.fixed_dictionaries(
            {},
            optional={
                "prompt_tokens": number,
                "completion_tokens": number,
                "cached_tokens": number,
                "cost_usd": weighted((4, floats), (2, number), (1, text)),
            },
        ),
    ),
    (1, scalar),
)
step = st.fixed_dictionaries(
    {},
    optional={
        "step_id": weighted(
            (4, st.integers(0, 20)),
            (2, st.sampled_from([*SPECIAL_INTS, 3.0, 3.5, "3", True, False, None, -0.0, 1e300])),
        ),
        "source": weighted(
            (5, st.just("agent")),
            (3, st.sampled_from(["user", "system"])),
            (1, st.sampled_from(["tool", "Agent", 5, None])),
        ),
        "model_name": weighted((3, text), (1, st.one_of(st.none(), ints))),
        "message": content,
        "reasoning_content": weighted(
            (3, text),
            (1, st.none()),
            (1, st.one_of(small_json, floats, st.lists(text, max_size=2))),
        ),
        "timestamp": st.sampled_from(TIMESTAMPS),
        "metrics": metrics,
        "is_copied_context": weighted((3, st.booleans()), (1, st.one_of(st.none(), ints))),
        "llm_call_count": weighted(
            (3, st.integers(0, 5)), (1, st.one_of(ints, floats, st.booleans(), text, st.none()))
        ),
        "extra": extra,
        "tool_calls": tool_calls,
        "observation": observation,
    },
)
# fmt: off
VERSIONS = [
    "ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.6", "ATIF-v1.8", "ATIF-v1.10", "ATIF-vX",
    "ATIF-v01.1",
]
# fmt: on
ODD_VERSIONS = [None, "garbage", 5, "atif-v1.6", ""]
final_metrics = weighted(
    (
        4,
        st.fixed_dictionaries(
            {},
            optional={
                "total_prompt_tokens": number,
                "total_completion_tokens": number,
                "total_cached_tokens": number,
                "total_cost_usd": number,
                "total_steps": ints,
            },
        ),
    ),
    (1, scalar),
)
# fmt: off
ODD_NAMES = [
    "it's.json", 'a"b.json', "x\x1cy.json", "\u2028.json", "日本.json", 'both\'".json', "b\\s.json",
    "./sub.json", "sub.json/", "x/../sub.json", "../agent/sub.json", ".", "/",
]
# fmt: on
# fmt: off
REFS = [
    {"trajectory_path": "sub.json"}, *({"trajectory_path": n} for n in ODD_NAMES),
    {"trajectory_id": "x", "trajectory_path": "sub.json"}, {"trajectory_id": "e1"},
    {"trajectory_path": "sub.json", "trajectory_id": "w"},
    [{"trajectory_path": "sub.json"}, {"trajectory_id": "e1"}], {},
    {"trajectory_path": "nope.json"}, "x", [],
    {"trajectory_path": "trajectory.summarization-1-summary.json"}, {"trajectory_id": 5},
]
# fmt: on
# fmt: off
CONT_REFS = [
    "trajectory.cont-1.json", "missing.json", "", 5, "trajectory.json",
    "/c/agent/trajectory.cont-1.json", "../x.json", None, *ODD_NAMES,
]
# fmt: on


@st.composite
def document(draw: st.DrawFn, sub: bool = True) -> Any:
    """One ATIF-ish document (mostly a dict that sniffs as ATIF)."""
    if chance(draw, 25):
        return draw(st.one_of(scalar, st.lists(small_json, max_size=2)))
    d: dict = {}
    v = pick(
        draw,
        (6, st.sampled_from(VERSIONS)),
        (2, st.just(MISSING)),
        (1, st.sampled_from(ODD_VERSIONS)),
    )
    if v is not MISSING:
        d["schema_version"] = v
    agent = pick(
        draw,
        (
            4,
            st.fixed_dictionaries(
                {"name": st.just("agent")},
                optional={"model_name": weighted((3, text), (1, st.one_of(ints, st.none())))},
            ),
        ),
        (1, st.just(MISSING)),
        (1, scalar),
    )
    if agent is not MISSING:
        d["agent"] = agent
    d["steps"] = pick(draw, (12, items(step, 3, 1)), (1, st.just([])), (1, scalar))
    if isinstance(d["steps"], list) and chance(draw, 3):  # the same call again: retried
        calls = [
            c
            for s in d["steps"]
            if isinstance(s, dict) and isinstance(s.get("tool_calls"), list)
            for c in s["tool_calls"]
            if isinstance(c, dict)
        ]
        if calls:
            again = dict(draw(st.sampled_from(calls)), tool_call_id="c9")
            d["steps"].append({"source": "agent", "tool_calls": [again]})
    if chance(draw, 3):
        d["final_metrics"] = draw(final_metrics)
    if sub and chance(draw, 8):
        d["continued_trajectory_ref"] = draw(st.sampled_from(CONT_REFS))
    if sub and chance(draw, 10):
        d["subagent_trajectories"] = draw(
            st.lists(weighted((4, embedded()), (1, scalar)), max_size=2)
        )
    if sub and isinstance(d["steps"], list) and chance(draw, 8):
        ref = draw(st.sampled_from(REFS))
        d["steps"].append(
            {
                "source": "agent",
                "observation": {"results": [{"content": "s", "subagent_trajectory_ref": ref}]},
            }
        )
    return d


MISSING = object()


@st.composite
def embedded(draw: st.DrawFn) -> Any:
    """An embedded subagent document (maybe with a trajectory_id)."""
    x = draw(document(sub=False))
    if isinstance(x, dict) and draw(st.booleans()):
        x["trajectory_id"] = draw(st.sampled_from(["e1", "e2", "main", 5, "it's", ""]))
    return x


# -- writers: the same document as different bytes


def _weird_dumps(obj: Any, rng: random.Random) -> bytes:
    """Hand-rolled JSON: random whitespace, escapes (\\u, \\/, surrogate pairs), number
    spellings (1E5, 1e+5, 30e-1, -0), NaN/Infinity literals, duplicate keys."""
    out: list[str] = []
    dups = rng.random() < 0.3  # duplicate keys in this document
    ws = lambda: rng.choice(["", "", "", " ", "\n", "\t", "\r\n  "])

    def s(v: str) -> None:
        out.append('"')
        for ch in v:
            o = ord(ch)
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif ch == "/" and rng.random() < 0.5:
                out.append("\\/")
            elif o < 0x20 or 0xD800 <= o <= 0xDFFF:
                short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o)
                out.append(
                    short
                    if short and rng.random() < 0.5
                    else rng.choice(["\\u%04x", "\\u%04X"]) % o
                )
            elif o > 0xFFFF and rng.random() < 0.5:
                hi, lo = 0xD800 + ((o - 0x10000) >> 10), 0xDC00 + ((o - 0x10000) & 0x3FF)
                out.append(f"\\u{hi:04x}\\u{lo:04X}")
            elif (o > 0x7F and rng.random() < 0.3) or rng.random() < 0.03:
                out.append(f"\\u{o:04x}" if o <= 0xFFFF else ch)
            else:
                out.append(ch)
        out.append('"')

    def num(v: float) -> str:
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "-Infinity"
        r = repr(v)
        k = rng.randrange(5)
        if k == 1:
            return r.replace("e", "E")
        if k == 2 and "e" in r and "e-" not in r:
            return r.replace("e", "e+")
        if k == 3:
            t = Decimal(r).as_tuple()
            digits = "".join(map(str, t.digits))
            return f"{'-' if t.sign else ''}{digits}e{t.exponent}"
        if k == 4 and r.endswith(".0"):
            return r + "00"
        return r

    def w(v: Any) -> None:
        if v is None:
            out.append("null")
        elif v is True or v is False:
            out.append("true" if v else "false")
        elif isinstance(v, int):
            out.append("-0" if v == 0 and rng.random() < 0.2 else str(v))
        elif isinstance(v, float):
            out.append(num(v))
        elif isinstance(v, str):
            s(v)
        elif isinstance(v, list):
            out.append("[" + ws())
            for i, x in enumerate(v):
                if i:
                    out.append(ws() + "," + ws())
                w(x)
            out.append(ws() + "]")
        else:
            out.append("{" + ws())
            items = list(v.items())
            if dups and items and rng.random() < 0.2:  # a duplicate key, the real pair wins
                k0 = rng.choice(items)[0]
                junk = rng.choice([None, 0, "dup", [1], {"d": 1}])
                at = (
                    0
                    if rng.random() < 0.5
                    else next(i for i, (k, _) in enumerate(items) if k == k0)
                )
                items.insert(at, (k0, junk))
            for i, (k, x) in enumerate(items):
                if i:
                    out.append(ws() + "," + ws())
                s(k)
                out.append(ws() + ":" + ws())
                w(x)
            out.append(ws() + "}")

    out.append(ws())
    w(obj)
    out.append(ws())
    return "".join(out).encode()


def _dumps(obj: Any, how: str, seed: int) -> bytes:
    if how == "orjson":
        try:
            return orjson.dumps(obj)
        except (TypeError, orjson.JSONEncodeError):  # ints over 64 bits, lone surrogates
            how = "json"
    if how == "json":
        return json.dumps(obj).encode()
    if how == "json_indent_ascii":
        return json.dumps(obj, indent=2, ensure_ascii=True).encode()
    if how == "json_indent_utf8":  # lone surrogates become invalid UTF-8 bytes
        return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return _weird_dumps(obj, random.Random(seed))


WRITERS = ["orjson", "orjson", "json", "json_indent_ascii", "json_indent_utf8", "weird", "weird"]


@st.composite
def trial(draw: st.DrawFn) -> dict[str, bytes]:
    """A trial folder: {agent-relative path: bytes}."""
    how = draw(st.sampled_from(WRITERS))
    seed = draw(st.integers(0, 2**32 - 1))
    lenient = chance(draw, 10)  # a NaN anywhere: the whole file is read by json.loads
    files: dict[str, bytes] = {}

    def put(name: str, doc: Any) -> None:
        if lenient and isinstance(doc, dict):
            doc = {**doc, "x_nan": float("nan")}
            files[name] = _dumps(doc, "json" if how == "orjson" else how, seed)
        else:
            files[name] = _dumps(doc, how, seed)

    main = draw(document())
    put("agent/trajectory.json", main)
    if isinstance(main, dict) and main.get("continued_trajectory_ref") and not chance(draw, 3):
        cont = draw(document(sub=False))
        if isinstance(cont, dict) and chance(draw, 4):
            cont["continued_trajectory_ref"] = draw(
                st.sampled_from(["trajectory.json", "trajectory.cont-2.json"])
            )
        put("agent/trajectory.cont-1.json", cont)
    k = draw(st.integers(0, 9))
    if k == 6:  # ignored by both paths
        files["agent/trajectory.notes.json"] = draw(st.sampled_from([b"{", b"[]", b""]))
    elif k == 7:
        put("agent/sub.json", draw(document(sub=False)))
    elif k == 8:
        put("agent/trajectory.summarization-1-summary.json", draw(document(sub=False)))
    elif k == 9:
        put("agent/trajectory.cont-2.json", draw(document(sub=False)))
    return files


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(
    trials=st.lists(trial(), min_size=3, max_size=5),
    tokens=st.lists(st.sampled_from([None, 0, 7, 100, 2**40]), min_size=20, max_size=20),
    costs=st.lists(st.sampled_from([None, 0.0, 0.25, 1.5]), min_size=5, max_size=5),
)
def test_random_documents(trials: list[dict[str, bytes]], tokens: list, costs: list) -> None:
    root = Path(tempfile.mkdtemp(prefix="evalkit-parity-"))
    try:
        dirs = []
        for i, files in enumerate(trials):
            td = root / "job" / f"trial{i}"
            _materialise(td, files)
            dirs.append(td)
        n = len(dirs)
        both(
            _trials(
                dirs,
                n_input_tokens=tokens[:n],
                n_output_tokens=tokens[5 : 5 + n],
                n_cache_tokens=tokens[10 : 10 + n],
                cost_usd=costs[:n],
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
