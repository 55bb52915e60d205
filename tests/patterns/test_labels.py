"""The labelled real trajectories: every judgement is asserted (agreements and the documented
disagreements), and docs/patterns.md carries the current precision / recall tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalkit.patterns as ep
from tests.patterns import labelled

DOC = Path(__file__).resolve().parents[2] / "docs" / "patterns.md"


def test_the_set_is_big_enough_and_well_formed():
    j = labelled.judgements()
    assert len(j) >= 40
    names = {d["name"] for d in ep.list_detectors("structural")}
    for tid, det, label, note in j:
        assert det in names, (tid, det)
        assert isinstance(label, bool) and len(note) >= 5, (tid, det)
    for t in labelled.load_labels()["trajectories"].values():
        assert (labelled.FIXTURES / t["path"]).is_file(), t["path"]


def test_every_labelled_trajectory_parses():
    f = labelled.frames()
    ids = set(labelled.load_labels()["trajectories"])
    assert set(f["steps"]["trial_id"].unique().to_list()) == ids


@pytest.mark.parametrize("mode", ["structural", "trainerd"])
def test_disagreements_are_exactly_the_documented_ones(mode):
    _, wrong = labelled.evaluate(mode)
    known = labelled.load_labels()["known_disagreements"][mode]
    expected = sorted((k["trajectory"], k["detector"], k["label"]) for k in known)
    assert wrong == expected


@pytest.mark.parametrize("mode", ["structural", "trainerd"])
def test_docs_table_is_current(mode):
    text = DOC.read_text()
    m = re.search(rf"<!-- labels:{mode}:start -->\n(.*?)\n<!-- labels:{mode}:end -->", text, re.S)
    assert m, f"docs/patterns.md has no labels:{mode} block"
    assert m.group(1).strip() == labelled.table(mode).strip(), (
        "regenerate with: python -m tests.patterns.labelled"
    )
