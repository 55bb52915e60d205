"""The seed tree the fuzz campaign mutates: copies of real fixture files laid out as a runs
folder (Harbor jobs of several formats, ATIF trajectories with continuation and subagent
files, verifier files, a go-code rollout folder with results.jsonl).

The tree is built once per process (``template()``) and copied for every case. Its layout
is fixed here so that a stored crasher (``tests/fixtures/crashers/``) replays on the same
tree: change it only together with the stored crashers.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HARBOR = FIXTURES / "harbor"
OPENCLAW = HARBOR / "openclaw-dev-jobs"
SKILLS = HARBOR / "skillsbench" / "minimax-m2.1+claude-code" / "no_skills"
GOLDEN = FIXTURES / "atif" / "harbor-golden" / "terminus_2"
ROLLOUTS = FIXTURES / "rollouts"
ROLLOUT_ID = "run_8cacf024-8246-4c1c-8d53-7764b878d664"

#: job folder (relative to the tree) -> its trial folder names
JOBS: dict[str, tuple[str, ...]] = {
    "hermes-job": ("hermes-telegram-clarify-mis-rout__7pYNGtk",),
    "exception-job": ("openclaw-telegram-media-failure__AK79ZWH",),
    "skills-job": ("3d-scan-calc__F8Fc7fn", "3d-scan-calc__qLuah6E", "dialogue-parser__EhaimzM"),
    "atif-job": ("hello-world__Summ4ry", "hello-world__Cont1nu", "multi-step__St3psAB"),
}
ROLLOUT_DIR = "rollouts"


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)


def _trial_result(src: Path, task: str, trial: str) -> str:
    d = json.loads(src.read_text())
    d["task_name"], d["trial_name"] = task, trial
    return json.dumps(d, indent=4)


def build(root: Path) -> Path:
    """Write the seed tree under ``root`` (which must not exist) and return it."""
    root.mkdir(parents=True)
    _copy(OPENCLAW / "2026-05-15__05-26-37", root / "hermes-job")
    _copy(OPENCLAW / "2026-05-26__11-12-36", root / "exception-job")
    sk = root / "skills-job"
    for f in ("config.json", "result.json"):
        _copy(SKILLS / f, sk / f)
    for t in JOBS["skills-job"]:
        _copy(SKILLS / t, sk / t)
    # a job of ATIF trajectories: summarization subagents, a continuation chain, multi-step
    aj = root / "atif-job"
    _copy(SKILLS / "config.json", aj / "config.json")
    _copy(SKILLS / "result.json", aj / "result.json")
    base = SKILLS / "3d-scan-calc__F8Fc7fn" / "result.json"
    t1 = aj / "hello-world__Summ4ry"
    (t1 / "agent").mkdir(parents=True)
    (t1 / "result.json").write_text(_trial_result(base, "hello-world", t1.name))
    pre = "hello-world-context-summarization"
    _copy(GOLDEN / f"{pre}.trajectory.json", t1 / "agent" / "trajectory.json")
    for part in ("answers", "questions", "summary"):
        _copy(
            GOLDEN / f"{pre}.trajectory.summarization-1-{part}.json",
            t1 / "agent" / f"trajectory.summarization-1-{part}.json",
        )
    (t1 / "verifier").mkdir()
    (t1 / "verifier" / "reward.txt").write_text("1.0\n")
    (t1 / "verifier" / "test-stdout.txt").write_text("PASSED test_hello\n1 passed\n")
    t2 = aj / "hello-world__Cont1nu"
    (t2 / "agent").mkdir(parents=True)
    (t2 / "result.json").write_text(_trial_result(base, "hello-world", t2.name))
    lin = f"{pre}-linear-history"
    _copy(GOLDEN / f"{lin}.trajectory.json", t2 / "agent" / "trajectory.json")
    _copy(GOLDEN / f"{lin}.trajectory.cont-1.json", t2 / "agent" / "trajectory.cont-1.json")
    (t2 / "verifier").mkdir()
    (t2 / "verifier" / "reward.json").write_text('{"reward": 0.5, "headline": "half"}\n')
    t3 = aj / "multi-step__St3psAB"
    t3.mkdir()
    (t3 / "result.json").write_text(_trial_result(base, "multi-step", t3.name))
    for step, src in (
        ("build", "hello-world.trajectory.json"),
        ("test", "hello-world-timeout.trajectory.json"),
    ):
        _copy(GOLDEN / src, t3 / "steps" / step / "agent" / "trajectory.json")
    # go-code rollouts with a results.jsonl
    rd = root / ROLLOUT_DIR
    _copy(
        ROLLOUTS / "run-toolcall-golden.DERIVED-rollout.jsonl",
        rd / "2026-07-27" / f"{ROLLOUT_ID}.jsonl",
    )
    _copy(ROLLOUTS / "simple-no-tool.jsonl", rd / "2026-01-15" / "simple-no-tool.jsonl")
    _copy(ROLLOUTS / "tool-with-output-key.jsonl", rd / "2026-01-15" / "tool-with-output-key.jsonl")
    rec = {
        "tool_id": "go-code", "task_id": "list-workspace", "run_id": ROLLOUT_ID,
        "status": "completed", "steps_taken": 2, "total_prompt_tokens": 260,
        "total_completion_tokens": 22, "total_cost_usd": 0.0025, "cost_status": "available",
        "model": "fake-model", "created_at": "2026-07-27T01:40:55Z",
        "updated_at": "2026-07-27T01:40:56Z", "duration_ms": 1000, "is_resolved": True,
        "tool_calls": [{"tool_name": "ls", "step": 1}], "parser_results": {"test_a": "passed"},
    }  # fmt: skip
    (rd / "results.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(rec, indent=2) + "\n")
    return root


@cache
def template() -> Path:
    """The seed tree, built once per process in a temporary folder."""
    parent = Path(
        tempfile.mkdtemp(prefix="evalkit-fuzz-seed-", dir=os.environ.get("EVALKIT_FUZZ_TMP"))
    )
    atexit.register(shutil.rmtree, parent, True)
    return build(parent / "runs")


@dataclass(frozen=True)
class Target:
    """A file or folder of the seed tree a mutation can hit."""

    rel: str
    is_dir: bool
    kind: str  # json, jsonl, text, dir


def targets(root: Path | None = None) -> list[Target]:
    """Every file and folder of the seed tree (not the root), in a stable order."""
    root = root or template()
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir != ".":
            out.append(Target(rel_dir, True, "dir"))
        for f in sorted(filenames):
            rel = os.path.normpath(os.path.join(rel_dir, f))
            kind = "jsonl" if f.endswith(".jsonl") else "json" if f.endswith(".json") else "text"
            out.append(Target(rel, False, kind))
    return out


def trial_dirs(root: Path) -> list[Path]:
    """The trial folders of the seed tree (as paths under ``root``)."""
    return [root / job / t for job, ts in JOBS.items() for t in ts]
