"""Content that once crashed build_trajectories on both paths (found by the parity suite):
file names that are not UTF-8, and values nested deeper than orjson and Python's repr go."""

from __future__ import annotations

import os

import polars as pl
import pytest

from evalkit.load.steps import native
from evalkit.load.steps.atif import NESTED_TOO_DEEP
from evalkit.load.steps.table import build_trajectories
from tests.load_steps.steps_helpers import atif_doc, write_json


@pytest.fixture(params=["python", "native"])
def path_mode(request, monkeypatch):
    if request.param == "native" and not native.available():
        pytest.skip("compiled extractor not built")
    monkeypatch.setenv("EVALKIT_NATIVE", "1" if request.param == "native" else "0")
    return request.param


def _one(trial_dir) -> object:
    trials = pl.DataFrame({"trial_id": ["t"], "trial_dir": [str(trial_dir)]})
    return build_trajectories(trials, cache=False, progress=False)


def _steps(n: int) -> list[dict]:
    return [{"step_id": i + 1, "source": "agent", "message": f"m{i}"} for i in range(n)]


def test_non_utf8_sibling_and_task_step_names(tmp_path, path_mode):
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


def test_values_nested_deeper_than_any_writer(tmp_path, path_mode):
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


def test_a_failed_extractor_batch_falls_back_to_python(tmp_path, monkeypatch):
    """If the compiled extractor's result is short (a worker died), every trial of the
    batch goes through the Python path: same frames, no error."""
    if not native.available():
        pytest.skip("compiled extractor not built")
    t = tmp_path / "t"
    write_json(t / "agent" / "trajectory.json", atif_doc(_steps(3)))
    monkeypatch.setenv("EVALKIT_NATIVE", "0")
    want = _one(t)
    monkeypatch.setenv("EVALKIT_NATIVE", "1")
    real = native.Result.counts

    def short(self, spec):  # the tables of a died worker are missing: rows read as -1
        c = real(self, spec)
        return [c[0], -1, -1, -1, -1, *c[5:]]

    monkeypatch.setattr(native.Result, "counts", short)
    got = _one(t)
    assert got.steps.equals(want.steps) and got.trial_summary.equals(want.trial_summary)


def test_a_library_with_another_column_layout_is_not_used(monkeypatch):
    """A stale build (the crate changed, setup not re-run) must not be read with the new
    column layout: evalkit then uses the Python path."""
    if not native.available():
        pytest.skip("compiled extractor not built")
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "LAYOUT", native.LAYOUT + "-another")
    assert not native.available()
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.undo()
    assert native.available()
