"""One ATIF document (any version v1.0-v1.8) -> rows appended to a column accumulator.

The document comes as the Structs of ``steps/atif_schema.py`` (decoded by msgspec, or a parsed
object converted by ``schema.lenient``); the per-step Python here builds the columns, the
vectorised parts (timestamps, exit codes, is_error, retries) run later over whole frames
(``derive.py``). Nothing here raises on bad content: wrong types become nulls, non-object
steps and calls are counted and reported by the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from evalkit.load.shared.io import as_int, finite_float, nested_deeper
from evalkit.load.steps.atif_schema import Metrics, Step, Trajectory, kind, lenient
from evalkit.load.steps.columns import CALL_FIELDS, STEP_FIELDS
from evalkit.load.steps.commands import shell_command, structured_signals

_VERSION = re.compile(r"ATIF-v(\d+)\.(\d+)")
_DUMPS = orjson.dumps
_SORT = orjson.OPT_SORT_KEYS
_INF = float("inf")
_EMPTY: dict = {}  # shared read-only default
_NO_METRICS = Metrics()


def as_columns(rows: list[tuple], fields: tuple[str, ...]) -> dict[str, list | tuple]:
    """Row tuples in ``fields`` order as one sequence per field (empty lists for no rows)."""
    if not rows:
        return {f: [] for f in fields}
    return dict(zip(fields, zip(*rows, strict=True), strict=True))


class Acc:
    """Accumulator: step columns as lists (extended per document with list comprehensions)
    and tool calls as row tuples (one append each, transposed in C by ``zip(*rows)``)."""

    __slots__ = ("calls", "steps")

    def __init__(self) -> None:
        self.steps: dict[str, list] = {f: [] for f in STEP_FIELDS}
        self.calls: list[tuple] = []

    @property
    def n_steps(self) -> int:
        return len(self.steps["step_index"])

    def extend(self, other: Acc) -> None:
        for k, v in other.steps.items():
            self.steps[k].extend(v)
        self.calls.extend(other.calls)

    def step_columns(self) -> dict[str, list]:
        return self.steps

    def call_columns(self) -> dict[str, list | tuple]:
        return as_columns(self.calls, CALL_FIELDS)


@dataclass
class DocResult:
    """What one ATIF document contributed (for the trial summary and for stitching)."""

    n_agent_steps: int = 0  # agent steps, copied context excluded
    n_tool_calls: int = 0  # calls of those steps
    n_bad_steps: int = 0
    final_metrics: dict | None = None
    version: tuple[int, int] | None = None
    continued_ref: str | None = None
    subagent_refs: list[dict] = field(default_factory=list)
    embedded: list[dict] = field(default_factory=list)
    #: (error_type, message) of content that could not be read as ATIF (load-error rows)
    problems: list[tuple[str, str]] = field(default_factory=list)


def atif_version(sv: Any) -> tuple[int, int] | None:
    """(major, minor) of a ``schema_version`` 'ATIF-vX.Y'; None when absent/unknown (read as v1.8)."""
    m = _VERSION.match(sv) if isinstance(sv, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def sniff(doc: Any) -> str | None:
    """None when ``doc`` is an ATIF trajectory, else a short description of what it is.

    ATIF = a dict whose schema_version starts with 'ATIF-', or (Harbor reads a missing
    version as v1.8) a dict with a ``steps`` list and an ``agent`` dict.
    """
    if isinstance(doc, dict):
        sv = doc.get("schema_version")
        if isinstance(sv, str) and sv.startswith("ATIF-"):
            return None
        if sv is None and isinstance(doc.get("steps"), list) and isinstance(doc.get("agent"), dict):
            return None
        keys = ", ".join(sorted(str(k) for k in doc)[:8])
        return f"a JSON object with keys {keys or '(none)'} (schema_version {sv!r})"
    if isinstance(doc, list):
        first = next((x for x in doc if isinstance(x, dict)), None)
        if first is not None:
            keys = sorted(str(k) for k in first)
            hint = ""
            if {"episode", "prompt", "response"} <= set(keys):
                hint = " (an episode log, e.g. terminus-2-skills)"
            elif {"command", "output", "return_code"} <= set(keys):
                hint = " (a command log, e.g. Harbor's oracle)"
            return f"a JSON list of {len(doc)} items with keys {', '.join(keys[:8])}{hint}"
        return f"a JSON list of {len(doc)} items"
    return f"a JSON {kind(doc)}"


def content_text(content: Any) -> str | None:
    """Message / observation content as text: parts joined by newlines, images and audio
    as ``[image: <path>]`` / ``[audio: <path>]`` placeholders."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for p in content:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict):
                t = p.get("type")
                if t == "text" or (t is None and isinstance(p.get("text"), str)):
                    txt = p.get("text")
                    out.append(txt if isinstance(txt, str) else "")
                else:
                    src = p.get("source")
                    path = src.get("path") if isinstance(src, dict) else None
                    if path is None and isinstance(src, dict):
                        path = src.get("url") or src.get("media_type")
                    out.append(f"[{t}: {path}]" if path is not None else f"[{t}]")
        return "\n".join(out)
    return _json_text(content)


def _json_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v
    try:
        return _DUMPS(v).decode()
    except TypeError:  # orjson refuses it (nested deeper than 254 levels): Python's repr
        if nested_deeper(v, MAX_REPR_DEPTH):
            return NESTED_TOO_DEEP
        try:
            return str(v)
        except RecursionError:  # a caller already deep in its own stack
            return NESTED_TOO_DEEP


#: Text of a value nested too deeply for orjson and for Python's repr.
NESTED_TOO_DEEP = "[value nested too deeply to show]"
#: Values nested deeper than this are not shown (a fixed rule: whether Python's repr
#: manages depends on the recursion limit and the caller's stack).
MAX_REPR_DEPTH = 512


def add_document(
    acc: Acc,
    doc: Trajectory | dict,
    *,
    trial_id: str,
    start_index: int,
    trajectory: str,
    is_main: bool,
    task_step: str | None,
) -> DocResult:
    """Append the steps and tool calls of one ATIF document (decoded, or a generically
    parsed object: ``schema.lenient``); returns what it contributed.

    ``start_index`` is the trial-level step_index of this document's first step.
    """
    if isinstance(doc, dict):
        doc, problems, n_bad = lenient(doc, start_index)
    else:
        problems, n_bad = [], 0
    res = _document_result(doc, problems, n_bad)
    st = doc.steps
    if not st:
        return res
    n = len(st)
    src = [s.source for s in st]
    copied = [s.is_copied_context for s in st]
    ts = [s.timestamp for s in st]
    pt, ct, ca, cost = _usage_columns(st, res.version)
    # Claude Code subagent steps inside the main file (extra.is_sidechain): kept, flagged,
    # not counted as the main agent's
    side = [type(x := s.extra) is dict and x.get("is_sidechain") is True for s in st]
    main = [is_main and not sc for sc in side]
    n_calls, step_obs = _add_tool_calls(
        acc.calls, res, st, ts, (trial_id, start_index), (trajectory, main, task_step)
    )
    for so, cp, nc, sc in zip(src, copied, n_calls, side, strict=True):
        if so == "agent" and not cp and not sc:
            res.n_agent_steps += 1
            res.n_tool_calls += nc
    S = acc.steps
    S["trial_id"].extend([trial_id] * n)
    S["step_index"].extend(range(start_index, start_index + n))
    S["trajectory"].extend([trajectory] * n)
    S["is_main"].extend(main)
    S["task_step"].extend([task_step] * n)
    S["source"].extend(src)
    S["_ts"].extend(ts)
    S["prompt_tokens"].extend(pt)
    S["completion_tokens"].extend(ct)
    S["cached_tokens"].extend(ca)
    S["cost_usd"].extend(cost)
    S["n_tool_calls"].extend(n_calls)
    S["observation"].extend(step_obs)
    S["is_copied_context"].extend(copied)
    S["is_sidechain"].extend(side)
    S["llm_retries"].extend([None] * n)  # a go-code count; ATIF records none
    _extend_step_content(S, st, src, _agent_model(doc.agent))
    return res


def _document_result(doc: Trajectory, problems: list, n_bad: int) -> DocResult:
    """The document-level part of a DocResult: version, final metrics, continuation and
    embedded subagents (the step counts and subagent refs are added per step)."""
    res = DocResult(version=atif_version(doc.schema_version), n_bad_steps=n_bad, problems=problems)
    fm = doc.final_metrics
    res.final_metrics = fm if isinstance(fm, dict) else None
    ref = doc.continued_trajectory_ref
    res.continued_ref = ref if isinstance(ref, str) and ref else None
    emb = doc.subagent_trajectories
    if isinstance(emb, list):
        res.embedded = [e for e in emb if isinstance(e, dict)]
    return res


def _agent_model(agent: Any) -> str | None:
    """The document's ``agent.model_name`` (the default of its agent steps), if a string."""
    model = agent.get("model_name") if isinstance(agent, dict) else None
    return model if isinstance(model, str) else None


def _usage_columns(
    st: list[Step], version: tuple[int, int] | None
) -> tuple[list, list, list, list]:
    """The prompt, completion and cached token and cost columns of a document's steps
    (before v1.2 prompt_tokens excluded the cached tokens: they are added back)."""
    ms = [s.metrics or _NO_METRICS for s in st]
    pt = [x if (x := m.prompt_tokens) is None or type(x) is int else as_int(x) for m in ms]
    ct = [x if (x := m.completion_tokens) is None or type(x) is int else as_int(x) for m in ms]
    ca = [x if (x := m.cached_tokens) is None or type(x) is int else as_int(x) for m in ms]
    cost = [
        x if (x := m.cost_usd) is None or (type(x) is float and x - x == 0) else finite_float(x)
        for m in ms
    ]
    if version is not None and version < (1, 2):
        pt = [p + c if p is not None and c else p for p, c in zip(pt, ca, strict=True)]
    return pt, ct, ca, cost


def _add_tool_calls(
    out: list, res: DocResult, st: list[Step], ts: list, where: tuple, label: tuple
) -> tuple[list[int], list[str | None]]:
    """Append the tool-call rows of a document's steps; returns the per-step call counts
    and step-level observation texts. ``where`` is (trial_id, first step_index), ``label``
    (trajectory, per-step is_main, task_step)."""
    trial_id, start_index = where
    trajectory, main, task_step = label
    n = len(st)
    n_calls = [0] * n
    step_obs: list[str | None] = [None] * n
    for i, s in enumerate(st):
        if s.tool_calls is not None or s.observation is not None:
            n_calls[i], step_obs[i] = _calls_and_observations(
                out, res, s, ts[i], (trial_id, start_index + i), (trajectory, main[i], task_step)
            )
    return n_calls, step_obs


def _extend_step_content(
    S: dict[str, list], st: list[Step], src: list, agent_model: str | None
) -> None:
    """Append the columns read from each step's own content (ids, model, texts, extra)."""
    S["step_id"].extend(
        [x if (x := s.step_id) is None or type(x) is int else as_int(x) for s in st]
    )
    S["model_name"].extend(
        [
            x if (x := s.model_name) is not None else (agent_model if so == "agent" else None)
            for s, so in zip(st, src, strict=True)
        ]
    )
    S["message"].extend(
        [x if type(x := s.message) is str or x is None else content_text(x) for s in st]
    )
    S["reasoning_content"].extend(
        [x if type(x := s.reasoning_content) is str or x is None else _json_text(x) for s in st]
    )
    S["llm_call_count"].extend(
        [x if (x := s.llm_call_count) is None or type(x) is int else as_int(x) for s in st]
    )
    S["extra"].extend([_json_text(x) if (x := s.extra) else None for s in st])


def _calls_and_observations(
    out: list, res: DocResult, st: Step, ts: str | None, where: tuple, label: tuple
) -> tuple[int, str | None]:
    """Append one step's tool-call rows (observations joined); returns (n_calls, step-level text)."""
    calls = st.tool_calls or ()
    step_obs = None
    by_call: dict[str, list[str]] = _EMPTY
    res_extra: dict[str, list] = _EMPTY
    results = st.observation.results if st.observation is not None else None
    if results:
        by_call, res_extra = {}, {}
        call_ids = {x for c in calls if (x := c.tool_call_id) is not None}
        step_level: list[str] = []
        for r in results:
            refs = r.subagent_trajectory_ref
            if refs:
                if type(refs) is list:
                    res.subagent_refs.extend(x for x in refs if type(x) is dict)
                elif type(refs) is dict:
                    res.subagent_refs.append(refs)
            c = r.content
            text = c if type(c) is str or c is None else content_text(c)
            sid = r.source_call_id
            if sid is not None and sid in call_ids:
                if text is not None:
                    by_call.setdefault(sid, []).append(text)
                rx = r.extra
                if rx:
                    res_extra.setdefault(sid, []).append(rx)
            elif text is not None:
                step_level.append(text)
        if step_level:
            step_obs = step_level[0] if len(step_level) == 1 else "\n".join(step_level)
    n_calls = len(calls)
    trial_id, idx = where
    trajectory, is_main, task_step = label
    for ci, c in enumerate(calls):
        cid, fn, args = c.tool_call_id, c.function_name, c.arguments
        texts = by_call.get(cid) if cid is not None else None
        if texts is not None:
            o, osrc = (texts[0] if len(texts) == 1 else "\n".join(texts)), "call_id"
        elif n_calls == 1 and step_obs is not None:
            o, osrc = step_obs, "step"
        else:
            o = osrc = None
        cx = c.extra
        rx = res_extra.get(cid) if cid is not None else None
        if cx or rx:
            s_err, s_exit = structured_signals(cx, *(rx or ()))
        else:
            s_err = s_exit = None
        out.append((  # in CALL_FIELDS order; duration_ms and _sig: go-code only
            trial_id, idx, ci, cid, trajectory, fn, _json_text(args), shell_command(fn, args),
            o, is_main, task_step, osrc, None, ts, s_err, s_exit, None,
        ))  # fmt: skip
    return n_calls, step_obs
