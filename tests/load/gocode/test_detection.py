"""is_rollout_folder is precise: rollout layouts match, Harbor job folders never do."""

from __future__ import annotations

from pathlib import Path

from evalkit.load.gocode import is_rollout_folder, rollout_files
from tests.load.gocode.rollout_helpers import (
    GOLDEN,
    GOLDEN_ID,
    ROLLOUTS,
    fixture_folder,
    write_rollout,
)

HERMES_JOBS = Path(__file__).parents[2] / "fixtures" / "atif" / "hermes" / "openclaw-dev-jobs"


def test_layouts_that_match(tmp_path):
    d = fixture_folder(tmp_path)
    assert is_rollout_folder(d)  # <dir>/<YYYY-MM-DD>/<run>.jsonl
    assert is_rollout_folder(d / "2026-01-15")  # a folder directly holding rollouts
    assert is_rollout_folder(ROLLOUTS)  # the fixture folder itself
    assert is_rollout_folder(d / "2026-07-27" / f"{GOLDEN_ID}.jsonl")  # a single file
    assert [Path(f).name for f in rollout_files(str(d))] == [
        "simple-no-tool.jsonl", "tool-with-output-key.jsonl", f"{GOLDEN_ID}.jsonl",
    ]  # fmt: skip


def test_things_that_do_not_match(tmp_path):
    # Harbor job folders (date-like names with __, trial folders with agent/*.jsonl inside)
    for job in HERMES_JOBS.iterdir():
        assert not is_rollout_folder(job)
    assert not is_rollout_folder(HERMES_JOBS)
    # a job folder holding a stray rollout file is still a Harbor job
    job = tmp_path / "2026-05-15__05-26-37"
    write_rollout(job / "x.jsonl", [{"seq": 0, "type": "run.started", "data": {}}])
    (job / "config.json").write_text("{}")
    assert not is_rollout_folder(job)
    # audit trail only, results.jsonl only, other JSONL logs, empty / missing
    a = tmp_path / "a" / "2026-01-01"
    a.mkdir(parents=True)
    (a / "audit.jsonl").write_text(
        '{"timestamp": "t", "run_id": "r", "event_type": "x", "payload": {}}\n'
    )
    assert not is_rollout_folder(tmp_path / "a")
    r = tmp_path / "r"
    r.mkdir()
    (r / "results.jsonl").write_text('{\n  "run_id": "x",\n  "status": "completed"\n}\n')
    (r / "session.jsonl").write_text('{"type": "message", "message": {}}\n')
    assert not is_rollout_folder(r)
    assert not is_rollout_folder(tmp_path / "missing")
    assert not is_rollout_folder(tmp_path / "a" / "2026-01-01" / "audit.jsonl")
    (tmp_path / "notes.txt").write_text("hi")
    assert not is_rollout_folder(tmp_path / "notes.txt")
    # a date folder of non-rollouts
    b = tmp_path / "b" / "2026-01-01"
    b.mkdir(parents=True)
    (b / "x.jsonl").write_bytes(GOLDEN.read_bytes()[:0] + b"not json\n")
    assert not is_rollout_folder(tmp_path / "b")
