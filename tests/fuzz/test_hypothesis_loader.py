"""Hypothesis over the loader: any JSON value (nested, huge, NaN, odd strings) at any field
path of any JSON file of the seed tree, or arbitrary bytes as any file, loads with every
guarantee of ``tests/fuzz/check.py`` (60 derandomized examples each in CI;
EVALKIT_HYPOTHESIS_EXAMPLES=N for a longer random search). Complements the mutation campaign with shrinking: a
failure comes back as the smallest value that breaks the loader."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.check import run_case
from tests.fuzz.corpus import targets, template
from tests.fuzz.fieldpaths import _lines, _paths, _set, field_paths, general

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)
SETTINGS = settings(
    max_examples=int(os.environ.get("EVALKIT_HYPOTHESIS_EXAMPLES", "60")),
    derandomize=os.environ.get("EVALKIT_HYPOTHESIS_EXAMPLES") is None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _write_value(rel: str, line: int, gpath: str, value: object) -> bytes:
    data = (template() / rel).read_bytes()
    if rel.endswith(".jsonl"):
        lines = data.splitlines(keepends=True)
        doc = dict(_lines(data))[line]
    else:
        doc = json.loads(data)
    path = next(p for p in _paths(doc) if general(p) == gpath)
    out = json.dumps(_set(doc, path, value), allow_nan=True).encode("utf-8", "surrogatepass")
    if rel.endswith(".jsonl"):
        lines[line] = out + b"\n"
        return b"".join(lines)
    return out


def _check(ops: list[dict]) -> None:
    with tempfile.TemporaryDirectory(prefix="ek-hyp-") as d:
        r = run_case(ops, Path(d), findings=False)
    assert r.status == "ok", (r.problems, r.trace[-1500:])


@SETTINGS
@given(where=st.sampled_from(field_paths()), value=JSON)
def test_any_value_at_any_field_path(where: tuple[str, int, str], value: object) -> None:
    rel, line, gpath = where
    _check([{"op": "write", "path": rel, "data": _write_value(rel, line, gpath, value)}])


FILES = [t.rel for t in targets() if not t.is_dir]


@SETTINGS
@given(rel=st.sampled_from(FILES), data=st.binary(max_size=300))
def test_any_bytes_as_any_file(rel: str, data: bytes) -> None:
    _check([{"op": "write", "path": rel, "data": data}])
