"""The ATIF objects (v1.0-v1.8) as msgspec Structs: one Struct per object the steps and
tool_calls frames read, decoded straight from a file's bytes.

Lenient where real files are: token counts may be floats, every field is optional, unknown
fields are ignored, and the free-form values (messages, reasoning, arguments, extras,
observation content) keep whatever JSON they hold. A file whose values have other types
than declared here (a string token count, a non-object step, ``steps`` as an object) is
decoded generically and converted by :func:`lenient`: a value of the wrong type reads as
null, non-object list items are dropped and reported (``Problems``), so both ways give the
same Structs for the same content.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import msgspec

from evalkit.load.shared.io import MAX_JSON_DEPTH, may_nest_deeper

Number = int | float


class Metrics(msgspec.Struct):
    prompt_tokens: Number | None = None
    completion_tokens: Number | None = None
    cached_tokens: Number | None = None
    cost_usd: Number | None = None


class ToolCall(msgspec.Struct):
    tool_call_id: str | None = None
    function_name: str | None = None
    arguments: Any = None
    extra: Any = None


class ObservationResult(msgspec.Struct):
    source_call_id: str | None = None
    content: Any = None
    subagent_trajectory_ref: Any = None
    extra: Any = None


class Observation(msgspec.Struct):
    results: list[ObservationResult] | None = None


class Step(msgspec.Struct):
    step_id: Number | None = None
    timestamp: str | None = None
    source: str | None = None
    model_name: str | None = None
    message: Any = None
    reasoning_content: Any = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: Number | None = None
    extra: Any = None


class Trajectory(msgspec.Struct):
    schema_version: Any = None
    session_id: Any = None
    trajectory_id: Any = None
    agent: Any = None
    steps: list[Step] | None = None
    final_metrics: Any = None
    continued_trajectory_ref: Any = None
    subagent_trajectories: Any = None


_DECODER = msgspec.json.Decoder(Trajectory)


#: Digit runs that may be an integer outside [-2**63, 2**64), which orjson reads as a float
#: and msgspec as a Python int: 20 digits, or a minus and 19 (-2**63 - 1 has 19). Such files
#: are parsed generically, so the free-form values are orjson's everywhere.
_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")
_LONG_INT = b"0" * 20
_LONG_NEGATIVE_INT = b"-" + b"0" * 19


def decode(data: bytes) -> Trajectory | None:
    """The document as a Trajectory, or None when it is not a JSON object with the declared
    types (then parse it generically and use :func:`lenient`)."""
    digits = data.translate(_DIGITS)
    if _LONG_INT in digits or _LONG_NEGATIVE_INT in digits:
        return None
    try:
        t = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    if sys.getrecursionlimit() > MAX_JSON_DEPTH and may_nest_deeper(data, MAX_JSON_DEPTH):
        # msgspec nests as deep as Python's recursion limit allows (the default stops it
        # first); the generic path applies the fixed MAX_JSON_DEPTH rule
        return None
    return t


def is_atif(t: Trajectory) -> bool:
    """ATIF = ``schema_version`` starting with 'ATIF-', or (Harbor reads a missing version
    as v1.8) a ``steps`` list and an ``agent`` object (``atif.sniff`` for parsed objects)."""
    sv = t.schema_version
    if isinstance(sv, str) and sv.startswith("ATIF-"):
        return True
    return sv is None and t.steps is not None and isinstance(t.agent, dict)


#: (error_type, message) of content read leniently (load-error rows).
Problems = list[tuple[str, str]]


def _fits(v: Any, kind: Any) -> bool:
    """Whether ``v`` is a value of the declared scalar ``kind`` (bool is not a number)."""
    if kind is Any:
        return True
    if kind == (Number | None):
        return type(v) in (int, float)
    if kind == (str | None):
        return type(v) is str
    if kind == (bool | None):
        return type(v) is bool
    raise TypeError(kind)


def _struct(cls: type[msgspec.Struct], d: dict, nested: dict) -> msgspec.Struct:
    """``cls`` from a dict: each declared scalar of the wrong type null; ``nested`` builds
    the Struct-valued fields."""
    kw = {}
    for name, kind in _fields(cls):
        v = d.get(name)
        if v is None:
            continue
        if name in nested:
            kw[name] = nested[name](v)
        elif _fits(v, kind):
            kw[name] = v
    return cls(**kw)


@functools.cache
def _fields(cls: type[msgspec.Struct]) -> tuple[tuple[str, Any], ...]:
    return tuple((f.name, f.type) for f in msgspec.structs.fields(cls))


def _objects(v: Any, build: Any) -> list | None:
    return [build(x) for x in v if type(x) is dict] if type(v) is list else None


def _result(d: dict) -> ObservationResult:
    return _struct(ObservationResult, d, {})  # type: ignore[return-value]


def _observation(v: Any) -> Observation | None:
    if type(v) is not dict:
        return None
    return Observation(results=_objects(v.get("results"), _result))


def _metrics(v: Any) -> Metrics | None:
    return _struct(Metrics, v, {}) if type(v) is dict else None  # type: ignore[return-value]


def _tool_call(d: dict) -> ToolCall:
    return _struct(ToolCall, d, {})  # type: ignore[return-value]


def _step(d: dict, index: int, problems: Problems) -> Step:
    calls = d.get("tool_calls")
    if type(calls) is list and any(type(c) is not dict for c in calls):
        n_bad = sum(type(c) is not dict for c in calls)
        problems.append(
            ("bad_tool_call", f"step {index}: {n_bad} tool call(s) are not JSON objects (skipped)")
        )
    elif calls is not None and type(calls) is not list:
        problems.append(
            (
                "bad_tool_call",
                f"step {index}: 'tool_calls' is a JSON {kind(calls)}, not a list (skipped)",
            )
        )
    nested = {
        "tool_calls": lambda v: _objects(v, _tool_call),
        "observation": _observation,
        "metrics": _metrics,
    }
    return _struct(Step, d, nested)  # type: ignore[return-value]


def kind(v: Any) -> str:
    """The JSON kind of a parsed value ('object', 'string', ...)."""
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(v), "number")


def lenient(doc: dict, start_index: int = 0) -> tuple[Trajectory, Problems, int]:
    """A generically parsed ATIF object as a Trajectory, what could not be read (problems)
    and the number of steps that are not objects (skipped). ``start_index``: the
    step_index of the document's first step (for the messages)."""
    problems: Problems = []
    steps = doc.get("steps")
    built: list[Step] | None = None
    n_bad = 0
    if type(steps) is list:
        built = []
        for x in steps:
            if type(x) is dict:
                built.append(_step(x, start_index + len(built), problems))
            else:
                n_bad += 1
    elif steps is not None:
        problems.append(
            ("bad_steps", f"'steps' is a JSON {kind(steps)}, not a list: no steps read")
        )
    t = _struct(Trajectory, doc, {"steps": lambda v: built})
    return t, problems, n_bad  # type: ignore[return-value]
