"""Content that once crashed build_trajectories: file names that are not UTF-8, and values
nested deeper than orjson and Python's repr go."""

from __future__ import annotations

import os

import polars as pl

from evalkit.load.steps.atif import NESTED_TOO_DEEP
from evalkit.load.steps.table import build_trajectories
from tests.load.steps.steps_helpers import atif_doc, write_json


def _one(trial_dir) -> object:
    trials = pl.DataFrame({"trial_id": ["t"], "trial_dir": [str(trial_dir)]})
    return build_trajectories(trials, cache=False, progress=False)


def _steps(n: int) -> list[dict]:
    return [{"step_id": i + 1, "source": "agent", "message": f"m{i}"} for i in range(n)]


def test_non_utf8_sibling_and_task_step_names(tmp_path):
    t = tmp_path / "t"
    write_json(t / "agent" / "trajectory.json", atif_doc(_steps(2)))
    odd = os.fsencode(t / "agent") + b"/trajectory.summarization-\xff.json"
    with open(odd, "wb") as f:
        f.write((t / "agent" / "trajectory.json").read_bytes())
    tf = _one(t)
    assert sorted(tf.steps["trajectory"].unique().to_list()) == ["main", "summarization-\ufffd"]
    assert tf.steps.height == 4 and tf.errors == []

    m = tmp_path / "m"
    for name in (b"\xfe", b"b"):
        d = os.fsencode(m / "steps") + b"/" + name + b"/agent"
        os.makedirs(d)
        with open(d + b"/trajectory.json", "wb") as f:
            f.write((t / "agent" / "trajectory.json").read_bytes())
    tf = _one(m)
    assert sorted(tf.steps["task_step"].unique().to_list()) == ["b", "\ufffd"]


def test_values_nested_deeper_than_any_writer(tmp_path):
    deep = "1"
    for _ in range(1000):  # orjson reads 1024 levels, writes 254; repr stops near 1000
        deep = '{"a":' + deep + "}"
    doc = (
        '{"schema_version":"ATIF-v1.6","agent":{"name":"x"},"steps":[{"step_id":1,'
        '"source":"agent","message":"m","extra":' + deep + ',"tool_calls":[{"tool_call_id":'
        '"c","function_name":"bash","arguments":' + deep + "}]}]}"
    )
    t = tmp_path / "t"
    (t / "agent").mkdir(parents=True)
    (t / "agent" / "trajectory.json").write_text(doc)
    tf = _one(t)
    assert tf.steps["extra"].to_list() == [NESTED_TOO_DEEP]
    assert tf.tool_calls["arguments"].to_list() == [NESTED_TOO_DEEP]
    # 300 levels: orjson refuses to write, Python's repr still can
    mid = "1"
    for _ in range(300):
        mid = '{"a":' + mid + "}"
    (t / "agent" / "trajectory.json").write_text(doc.replace(deep, mid))
    assert _one(t).steps["extra"][0].startswith("{'a': {'a': ")
