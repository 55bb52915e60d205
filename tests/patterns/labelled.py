"""The labelled set (tests/fixtures/labels/labels.json): load it, run the detectors, score them.

``python -m tests.patterns.labelled`` prints the precision / recall tables that
docs/patterns.md carries (a test fails when they drift apart).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl

import evalkit.patterns as ep
from evalkit.load.gocode import read_rollouts
from evalkit.load.steps import read_trajectory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LABELS = FIXTURES / "labels" / "labels.json"
TRAINERD_TYPES = (
    "retry_loop", "hedge_assertion", "unverified_file_claim", "premature_completion",
    "skipped_diagnostic", "architecture_assumption",
)  # fmt: skip


def load_labels() -> dict:
    return json.loads(LABELS.read_text())


def judgements() -> list[tuple[str, str, bool, str]]:
    """(trajectory id, detector, label, note) for every judgement."""
    out = []
    for tid, t in load_labels()["trajectories"].items():
        for det, (label, note) in t["labels"].items():
            out.append((tid, det, bool(label), note))
    return out


@cache
def frames() -> dict[str, pl.DataFrame]:
    """steps / tool_calls / trials of every labelled trajectory, trial_id = its label id."""
    steps, calls, trials = [], [], []
    for tid, t in load_labels()["trajectories"].items():
        path = FIXTURES / t["path"]
        if t["format"] == "go-code":
            rf = read_rollouts(path, progress=False)
            s = rf.steps.with_columns(pl.lit(tid).alias("trial_id"))
            c = rf.tool_calls.with_columns(pl.lit(tid).alias("trial_id"))
        else:
            s, c, _, _ = read_trajectory(path, trial_id=tid)
        steps.append(s)
        calls.append(c)
        trials.append(
            {"trial_id": tid, "reward": t["reward"], "exception_type": t["exception_type"]}
        )
    return {
        "steps": pl.concat(steps, how="diagonal_relaxed"),
        "tool_calls": pl.concat(calls, how="diagonal_relaxed"),
        "trials": pl.DataFrame(
            trials,
            schema={"trial_id": pl.String, "reward": pl.Float64, "exception_type": pl.String},
        ),
    }


@cache
def predictions(mode: str) -> frozenset[tuple[str, str]]:
    f = ep.detect(frames(), mode=mode)
    return frozenset(zip(f["trial_id"].to_list(), f["detector"].to_list(), strict=True))


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def specificity(self) -> float | None:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else None


def evaluate(mode: str) -> tuple[dict[str, Score], list[tuple[str, str, bool]]]:
    """Per detector scores, and the disagreements (trajectory, detector, human label)."""
    pred = predictions(mode)
    scores: dict[str, Score] = {}
    wrong = []
    for tid, det, label, _ in judgements():
        if mode == "trainerd" and det not in TRAINERD_TYPES:
            continue
        s = scores.setdefault(det, Score())
        hit = (tid, det) in pred
        if hit and label:
            s.tp += 1
        elif hit:
            s.fp += 1
            wrong.append((tid, det, label))
        elif label:
            s.fn += 1
            wrong.append((tid, det, label))
        else:
            s.tn += 1
    return scores, sorted(wrong)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def table(mode: str) -> str:
    """The Markdown precision / recall table of one mode."""
    scores, _ = evaluate(mode)
    order = [d["name"] for d in ep.list_detectors(mode)]
    rows = [
        "| detector | judged | positives | TP | FP | FN | TN | precision | recall | specificity |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    tot = Score()
    for det in sorted(scores, key=lambda d: order.index(d) if d in order else 99):
        s = scores[det]
        tot.tp, tot.fp, tot.fn, tot.tn = tot.tp + s.tp, tot.fp + s.fp, tot.fn + s.fn, tot.tn + s.tn
        n = s.tp + s.fp + s.fn + s.tn
        rows.append(
            f"| {det} | {n} | {s.tp + s.fn} | {s.tp} | {s.fp} | {s.fn} | {s.tn} | "
            f"{_fmt(s.precision)} | {_fmt(s.recall)} | {_fmt(s.specificity)} |"
        )
    n = tot.tp + tot.fp + tot.fn + tot.tn
    rows.append(
        f"| **all** | {n} | {tot.tp + tot.fn} | {tot.tp} | {tot.fp} | {tot.fn} | {tot.tn} | "
        f"{_fmt(tot.precision)} | {_fmt(tot.recall)} | {_fmt(tot.specificity)} |"
    )
    return "\n".join(rows)


def summary() -> str:
    j = judgements()
    c = Counter(d for _, d, _, _ in j)
    return f"{len(j)} judgements over {len({t for t, *_ in j})} trajectories, {len(c)} detectors"


if __name__ == "__main__":  # pragma: no cover
    print(summary())
    for m in ("structural", "trainerd"):
        print(f"\n## {m}\n")
        print(table(m))
        print("\ndisagreements:", evaluate(m)[1])
