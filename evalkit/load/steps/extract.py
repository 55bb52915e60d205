"""Find and stitch a trial's trajectory files: main + continuations + subagents.

Layout read (harbor-format.md §1, §3):

* ``<trial>/agent/trajectory.json``: the main ATIF trajectory; ``continued_trajectory_ref``
  (e.g. ``trajectory.cont-1.json``) chains continuation files, stitched in order into one
  'main' trajectory (copied context steps keep ``is_copied_context``).
* Subagents: ``subagent_trajectory_ref`` entries in observation results (a
  ``trajectory_path`` relative to the referring file, or a ``trajectory_id`` of an embedded
  ``subagent_trajectories`` item), every embedded item, and unreferenced
  ``trajectory.summarization-*.json`` siblings. Each gets its own ``trajectory`` label
  (``summarization-1-summary``, the trajectory_id, ...) and ``is_main = False``; their steps
  come after the main trajectory's steps.
* Multi-step tasks: ``<trial>/steps/<name>/agent/trajectory.json`` (``task_step = name``),
  ordered by their first timestamp when all have one, else by name.
* A file named ``<prefix>trajectory.json`` resolves references as ``<prefix><ref>`` when
  ``<ref>`` itself is absent (Harbor's golden test files are stored that way).
* No trajectory: a goose stream-json log gives n_turns (``goose.py``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import polars as pl
from orjson import JSONDecodeError
from orjson import loads as _loads

from evalkit.load.errors import LoadError
from evalkit.load.shared import io
from evalkit.load.shared.timeparse import parse_aware, parse_naive
from evalkit.load.steps.atif import Acc, DocResult, add_document, sniff
from evalkit.load.steps.atif_schema import Trajectory, decode, is_atif
from evalkit.load.steps.goose import find_goose_log, goose_turns

_CONT = re.compile(r"trajectory\.cont-(\d+)\.json$")
_MAX_FILES = 500  # continuation / subagent files per trial (cycle and bomb guard)
_MAX_DEPTH = 4
_norm = os.path.normpath


class Listing(NamedTuple):
    """What a trial folder holds, when the caller listed it already (saves the syscalls of
    looking for files that are not there; see ``steps/table.py``)."""

    agent: frozenset[str] | None  # names in agent/ (empty: no agent/ folder); None: unknown
    steps: bool | None  # a steps/ folder exists; None: unknown


@dataclass
class TrialParse:
    """Everything parsed for one trial."""

    trial_id: str
    acc: Acc = field(default_factory=Acc)
    errors: list[LoadError] = field(default_factory=list)
    has_trajectory: bool = False
    n_steps: int = 0
    n_tool_calls: int = 0
    n_turns: int | None = None
    final_metrics: list[tuple[dict, tuple[int, int] | None]] = field(default_factory=list)


class _Ctx:
    def __init__(self, tp: TrialParse, job_id: str | None) -> None:
        self.tp = tp
        self.job_id = job_id
        self.base = tp.acc.n_steps  # rows of earlier trials in a shared accumulator
        self.seen: set[str] = set()
        self.labels: set[str] = set()

    def err(self, path: str, kind: str, msg: str) -> None:
        path, msg = io.text_name(path), io.text_name(msg)  # names that were not UTF-8
        self.tp.errors.append(
            LoadError(path, "trajectory", kind, msg, self.job_id, self.tp.trial_id)
        )

    def load(self, path: str, missing_ok: bool = False) -> Trajectory | dict | None:
        """The ATIF document at ``path``: decoded into Structs, or (other types than
        declared, not strict JSON) parsed generically; None after an error row."""
        data, e = _read(path)
        if missing_ok and e is not None and e.error_type == "missing":
            return None
        if e is None and (t := decode(data)) is not None and is_atif(t):  # type: ignore[arg-type]
            return t
        doc = None
        if e is None:
            try:
                doc = _loads(data)
            except JSONDecodeError:
                doc, e = io.parse_json(data, path, "trajectory")  # NaN literals, empty, ...
        if e is not None:
            if e.error_type == "json_decode" and _looks_jsonl(data):
                self.err(
                    path, "not_atif", "JSON Lines (one object per line), not an ATIF trajectory"
                )
            else:
                self.err(path, e.error_type, e.message)
            return None
        what = sniff(doc)
        if what is not None:
            self.err(path, "not_atif", f"not an ATIF trajectory: {what}")
            return None
        return doc

    def unique_label(self, label: str) -> str:
        label = io.text_name(label)
        out, n = label, 1
        while out in self.labels:
            n += 1
            out = f"{label}#{n}"
        self.labels.add(out)
        return out


def _read(path: str) -> tuple[bytes | None, LoadError | None]:
    """io.read_regular, telling a dangling symlink ('broken_link') from a missing file."""
    data, err, _ = io.read_regular(path, "trajectory")
    if err is not None and err.error_type == "missing" and os.path.islink(path):
        err = LoadError(path, "trajectory", "broken_link", "symbolic link to a missing file")
    return data, err


def _looks_jsonl(data: bytes | None) -> bool:
    if not data:
        return False
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        return isinstance(io.orjson.loads(first), dict) and b"\n{" in data
    except io.orjson.JSONDecodeError:
        return False


def _prefix(path: str) -> str:
    base = os.path.basename(path)
    return base[: -len("trajectory.json")] if base.endswith("trajectory.json") else ""


def _resolve(base_dir: str, prefix: str, ref: str) -> str | None:
    """A referenced file inside base_dir (container paths: by basename), else None."""
    if not isinstance(ref, str) or not ref or "\x00" in ref:
        return None
    names = [os.path.basename(ref)] if os.path.isabs(ref) else [ref]
    if prefix:
        names.append(prefix + names[0])
    root = _norm(base_dir)
    for n in names:
        cand = _norm(os.path.join(root, n))
        if cand.startswith(root + os.sep) and os.path.isfile(cand):
            return cand
    return None


def _sub_label(path: str, prefix: str) -> str:
    base = os.path.basename(path)
    if base.startswith(prefix + "trajectory."):
        base = base[len(prefix + "trajectory.") :]
    return base[:-5] if base.endswith(".json") else base


def _add(ctx: _Ctx, doc: dict, label: str, is_main: bool, task_step: str | None) -> DocResult:
    acc = ctx.tp.acc
    return add_document(
        acc, doc, trial_id=ctx.tp.trial_id, start_index=acc.n_steps - ctx.base,
        trajectory=label, is_main=is_main, task_step=task_step,
    )  # fmt: skip


def _chain(
    ctx: _Ctx, path: str, doc: dict, label: str, is_main: bool, task_step: str | None, pending: list
) -> DocResult | None:
    """Add a document and its continuation chain; queue its subagents on ``pending``.

    Returns the last document result that carried final_metrics (or None).
    """
    base_dir, prefix = os.path.dirname(path), _prefix(path)
    last: DocResult | None = None
    while doc is not None:
        ctx.seen.add(_norm(path))
        res = _add(ctx, doc, label, is_main, task_step)
        if res.n_bad_steps:
            ctx.err(path, "bad_step", f"{res.n_bad_steps} step(s) are not JSON objects (skipped)")
        for kind, msg in res.problems:
            ctx.err(path, kind, msg)
        if is_main:
            ctx.tp.n_steps += res.n_agent_steps
            ctx.tp.n_tool_calls += res.n_tool_calls
        for r in res.subagent_refs:
            pending.append(("ref", r, base_dir, prefix, doc))
        for e in res.embedded:
            pending.append(("embedded", e, path, prefix, None))
        if res.final_metrics is not None:
            last = res  # the last file's final_metrics are cumulative over the chain
        ref = res.continued_ref
        doc = None
        if ref is not None:
            nxt = _resolve(base_dir, prefix, ref)
            if nxt is None:
                ctx.err(path, "missing_continuation", f"continued_trajectory_ref {ref!r} not found")
            elif _norm(nxt) in ctx.seen or len(ctx.seen) >= _MAX_FILES:
                ctx.err(
                    nxt, "continuation_cycle", "continuation already read (cycle) or too many files"
                )
            else:
                path = nxt
                ctx.seen.add(_norm(nxt))  # referenced: never an unlinked sibling, even unreadable
                doc = ctx.load(nxt)
    return last


def _subagents(ctx: _Ctx, pending: list, task_step: str | None, depth: int = 0) -> None:
    embedded_by_id: dict[str, dict] = {}
    for kind, item, *_ in pending:
        if kind == "embedded" and isinstance(item.get("trajectory_id"), str):
            embedded_by_id.setdefault(item["trajectory_id"], item)
    done_embedded: set[int] = set()
    nxt: list = []
    for kind, item, where, prefix, _doc in pending:
        if len(ctx.seen) >= _MAX_FILES:
            break
        if kind == "embedded":
            if id(item) in done_embedded or sniff(item) is not None:
                continue
            done_embedded.add(id(item))
            label = item.get("trajectory_id") or item.get("session_id") or "subagent"
            _chain(ctx, where, item, ctx.unique_label(str(label)), False, task_step, nxt)
            continue
        tpath = item.get("trajectory_path")
        tid = item.get("trajectory_id")
        if isinstance(tid, str) and tid in embedded_by_id and not isinstance(tpath, str):
            emb = embedded_by_id[tid]
            if id(emb) not in done_embedded:
                done_embedded.add(id(emb))
                _chain(ctx, where, emb, ctx.unique_label(tid), False, task_step, nxt)
            continue
        if not isinstance(tpath, str):
            if not isinstance(tid, str):
                ctx.err(
                    where,
                    "bad_subagent_ref",
                    "subagent_trajectory_ref without trajectory_path or trajectory_id",
                )
            continue
        p = _resolve(where, prefix, tpath)
        if p is None:
            ctx.err(
                os.path.join(where, tpath),
                "missing_subagent",
                f"subagent trajectory {tpath!r} not found",
            )
            continue
        if _norm(p) in ctx.seen:
            continue
        doc = ctx.load(p)
        if doc is None:
            ctx.seen.add(_norm(p))
            continue
        label = tid if isinstance(tid, str) and tid else _sub_label(p, prefix)
        _chain(ctx, p, doc, ctx.unique_label(label), False, task_step, nxt)
    if nxt and depth < _MAX_DEPTH:
        _subagents(ctx, nxt, task_step, depth + 1)


def parse_main(
    ctx: _Ctx,
    path: str,
    task_step: str | None,
    missing_ok: bool = False,
    siblings: frozenset[str] | None = None,
) -> None:
    """Main trajectory at ``path`` with continuations, subagents and orphans.

    ``siblings``: the names in the file's folder when the caller listed it already."""
    doc = ctx.load(path, missing_ok)
    if doc is None:
        ctx.seen.add(_norm(path))
        return
    ctx.tp.has_trajectory = True
    ctx.labels = set()  # labels are unique within one task step
    pending: list = []
    last = _chain(ctx, path, doc, ctx.unique_label("main"), True, task_step, pending)
    base_dir, prefix = os.path.dirname(path), _prefix(path)
    # unlinked continuation files / unreferenced summarization files next to the main file
    if siblings is not None:
        names = sorted(siblings)
    else:
        try:
            names = sorted(os.listdir(base_dir))
        except OSError:
            names = []
    conts, summ = [], []
    for n in names:
        if not n.startswith(prefix + "trajectory."):
            continue
        full = os.path.join(base_dir, n)
        if _norm(full) in ctx.seen:
            continue
        m = _CONT.search(n)
        if m and n == f"{prefix}trajectory.cont-{m.group(1)}.json":
            conts.append((int(m.group(1)), full))
        elif n.startswith(prefix + "trajectory.summarization-") and n.endswith(".json"):
            summ.append(full)
    for _, full in sorted(conts):
        if _norm(full) in ctx.seen:
            continue
        ctx.err(
            full,
            "unlinked_continuation",
            "continuation file not referenced by continued_trajectory_ref; appended to main in cont-N order",
        )
        d = ctx.load(full)
        if d is not None:
            r = _chain(ctx, full, d, "main", True, task_step, pending)
            last = r if r is not None else last
    for full in summ:
        pending.append(("ref", {"trajectory_path": os.path.basename(full)}, base_dir, "", None))
    if last is not None and last.final_metrics is not None:
        ctx.tp.final_metrics.append((last.final_metrics, last.version))
    _subagents(ctx, pending, task_step)


def _first_ts(path: str) -> str | None:
    doc, e = io.read_json(path, "trajectory")
    if e is None and isinstance(doc, dict) and isinstance(doc.get("steps"), list):
        for s in doc["steps"]:
            if isinstance(s, dict) and isinstance(s.get("timestamp"), str):
                return s["timestamp"]
    return None


def task_step_files(trial_dir: str) -> list[tuple[str, str]]:
    """[(task step name, trajectory path)] for a multi-step trial, in run order."""
    sdir = os.path.join(trial_dir, "steps")
    try:
        names = sorted(
            n
            for n in os.listdir(sdir)
            if os.path.isfile(os.path.join(sdir, n, "agent", "trajectory.json"))
        )
    except OSError:
        return []
    files = [(n, os.path.join(sdir, n, "agent", "trajectory.json")) for n in names]
    if len(files) > 1:
        times = _as_times([_first_ts(p) for _, p in files])
        if all(t is not None for t in times):
            files = [f for _, f in sorted(zip(times, files, strict=True))]
    return files


def _as_times(stamps: list[str | None]) -> list[datetime | None]:
    """Timestamps as instants, for ordering: zoned ones in UTC, naive ones as given (the
    task steps of one trial share its zone); None where a stamp is missing or unreadable."""
    s = pl.Series("ts", stamps, pl.String)
    t = pl.select(
        pl.coalesce(parse_aware(pl.lit(s)), parse_naive(pl.lit(s)).dt.replace_time_zone("UTC"))
    )
    return t.to_series().to_list()


def parse_trial(
    trial_id: str,
    trial_dir: str,
    job_id: str | None = None,
    agent_name: str | None = None,
    acc: Acc | None = None,
    listing: Listing | None = None,
) -> TrialParse:
    """Parse every trajectory of one Harbor trial folder (never raises on content).

    Rows go to ``acc`` when given (a batch accumulator shared by many trials); ``listing``
    (what the folder holds, when the caller knows) only skips lookups of absent files.
    """
    tp = TrialParse(trial_id) if acc is None else TrialParse(trial_id, acc)
    ctx = _Ctx(tp, job_id)
    main = os.path.join(trial_dir, "agent", "trajectory.json")
    names = listing.agent if listing is not None else None
    if names is None or "trajectory.json" in names:
        # no agent/trajectory.json: not an error
        parse_main(ctx, main, None, missing_ok=True, siblings=names)
    else:
        ctx.seen.add(_norm(main))  # as parse_main does for a missing file
    if listing is None or listing.steps is not False:
        for name, p in task_step_files(trial_dir):
            parse_main(ctx, p, io.text_name(name))
    if tp.has_trajectory:
        tp.n_turns = tp.n_steps
    else:
        log = find_goose_log(trial_dir, agent_name, names)
        if log is not None:
            tp.n_turns = goose_turns(log)
    return tp


def parse_file(path: str, trial_id: str, job_id: str | None = None) -> TrialParse:
    """Parse one trajectory file as a trial's main trajectory (continuations and subagents
    resolved next to it)."""
    tp = TrialParse(trial_id)
    parse_main(_Ctx(tp, job_id), os.fspath(path), None)
    tp.n_turns = tp.n_steps if tp.has_trajectory else None
    return tp
