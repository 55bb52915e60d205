"""evalkit.patterns.registry: the @detector decorator, Detector, unregister / registered /
list_detectors. (test_api.py covers docstring descriptions, unregistering every mode and the
unknown-mode error through the public surface; this pins the rest of the registry's rules.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import evalkit.patterns  # noqa: F401  (registers the built-in detectors)
from evalkit.patterns import registry as reg
from evalkit.patterns.registry import (
    MODES,
    Detector,
    detector,
    list_detectors,
    registered,
    unregister,
)

#: The structural rules of docs/patterns.md's "Structural mode" table, in that table's order.
DOC_STRUCTURAL = [
    "retry_loop", "repeated_failed_command", "skipped_diagnostic", "ignored_error_output",
    "hedge_assertion", "premature_completion", "false_success_claim", "unverified_file_claim",
    "edit_without_read", "test_tampering", "architecture_assumption", "no_progress",
    "context_exhaustion", "timeout_burn", "giving_up",
]  # fmt: skip

NAME = "_test_registry_probe"


@pytest.fixture(autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    unregister(NAME)
    unregister(NAME + "_b")


def _fn(ctx):  # pragma: no cover - never run
    """First line.

    More text."""


def test_rule_version_is_mode_dash_version():
    d = Detector("x", "trainerd", _fn, version=7)
    assert d.rule_version == "trainerd-7"
    # the defaults the docstring promises
    d1 = Detector("x", "structural", _fn)
    assert (d1.version, d1.params, d1.description, d1.builtin) == (1, {}, "", False)
    assert d1.rule_version == "structural-1"


def test_decorator_registers_every_mode_and_returns_the_function():
    out = detector(NAME, modes=("structural", "trainerd"), version=3, params={"k": 2})(_fn)
    assert out is _fn
    mine = [d for d in registered() if d.name == NAME]
    assert [d.mode for d in mine] == ["structural", "trainerd"]
    for d in mine:
        assert (d.fn, d.version, d.params, d.description, d.builtin) == (
            _fn, 3, {"k": 2}, "First line.", False,
        )  # fmt: skip
    assert [d.rule_version for d in mine] == ["structural-3", "trainerd-3"]


def test_explicit_description_wins_and_missing_docstring_gives_empty():
    detector(NAME, description="explicit")(_fn)
    assert [d.description for d in registered() if d.name == NAME] == ["explicit"]

    def nodoc(ctx):  # pragma: no cover
        return None

    detector(NAME + "_b")(nodoc)
    assert [d.description for d in registered() if d.name == NAME + "_b"] == [""]


def test_params_are_copied_not_shared():
    p = {"k": 1}
    detector(NAME, params=p)(_fn)
    p["k"] = 99  # the caller mutates its dict afterwards
    (d,) = [d for d in registered("structural") if d.name == NAME]
    assert d.params == {"k": 1}


def test_registering_again_replaces_in_place_for_that_mode_only():
    detector(NAME, modes=("structural", "trainerd"), version=1)(_fn)
    detector(NAME + "_b")(_fn)
    before = [d.name for d in registered("structural")]
    detector(NAME, modes=("structural",), version=2)(_fn)
    # same position in registration order (dict key kept), new version; trainerd untouched
    assert [d.name for d in registered("structural")] == before
    versions = {(d.mode, d.version) for d in registered() if d.name == NAME}
    assert versions == {("structural", 2), ("trainerd", 1)}


def test_unregister_one_mode_keeps_the_other():
    detector(NAME, modes=("structural", "trainerd"))(_fn)
    unregister(NAME, "trainerd")
    assert [(d.name, d.mode) for d in registered() if d.name == NAME] == [(NAME, "structural")]
    unregister(NAME, "trainerd")  # unregistering a missing key is a no-op
    unregister("_never_registered_")
    assert [d.mode for d in registered() if d.name == NAME] == ["structural"]


def test_unknown_mode_in_a_sequence_registers_nothing():
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        detector(NAME, modes=("structural", "fast"))
    assert NAME not in {d.name for d in registered()}


def test_registered_filters_by_mode_and_list_detectors_mirrors_it():
    detector(NAME, modes=("trainerd",), version=4, description="d")(_fn)
    assert NAME not in {d.name for d in registered("structural")}
    rows = [r for r in list_detectors("trainerd") if r["name"] == NAME]
    assert rows == [
        {"name": NAME, "mode": "trainerd", "rule_version": "trainerd-4", "description": "d"}
    ]
    assert list_detectors() == [
        {
            "name": d.name,
            "mode": d.mode,
            "rule_version": d.rule_version,
            "description": d.description,
        }
        for d in registered()
    ]
    assert MODES == ("structural", "trainerd")


def test_builtin_structural_detectors_are_the_documented_ones():
    # docs/patterns.md lists 15 structural rules; every one is registered and built in, at
    # version 1 except timeout_burn (2: `timeout N cmd` stopped counting as a wait) and
    # no_progress (2: a trial without a reward or a verdict is no long tail) and
    # edit_without_read (2: a file a patch adds is not an edit)
    got = {d.name: d for d in registered("structural") if d.builtin}
    assert sorted(got) == sorted(DOC_STRUCTURAL)
    versions = {n: d.rule_version for n, d in got.items()}
    for name in ("timeout_burn", "no_progress", "edit_without_read"):
        assert versions.pop(name) == "structural-2", name
    assert set(versions.values()) == {"structural-1"}
    # each built-in description is its docstring's first line (non-empty)
    assert all(d.description and "\n" not in d.description for d in got.values())
    assert got["no_progress"].description == (
        "Stuck: a window of calls that repeats itself and writes nothing new."
    )


def test_registry_keys_are_name_and_mode():
    detector(NAME, modes=("structural", "trainerd"))(_fn)
    assert (NAME, "structural") in reg._REGISTRY and (NAME, "trainerd") in reg._REGISTRY
