"""steps/atif_schema.py: the ATIF v1.0-v1.8 objects as msgspec Structs.

The module decodes a file's bytes straight into Structs (``decode``), tells an ATIF
trajectory from other JSON (``is_atif``), and converts a generically parsed document into
the same Structs (``lenient``) when the strict decode refuses it. Checked here: the
leniency rules (float token counts, unknown fields, every field optional, free-form values
kept), which inputs the strict decoder hands over to the generic path (wrong types,
integers beyond 64 bits, nesting deeper than MAX_JSON_DEPTH), that a wrong-typed value
reads as null (bool is not a number), that non-object steps and calls are dropped and
reported, and that both ways give the same Structs for the same content.
"""

from __future__ import annotations

import json
import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.shared.io import MAX_JSON_DEPTH
from evalkit.load.steps.atif_schema import (
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
    decode,
    is_atif,
    kind,
    lenient,
)


def _doc(steps: list, **root) -> dict:
    d = {"schema_version": "ATIF-v1.7", "session_id": "s", "agent": {"name": "a"}}
    d["steps"] = steps
    d.update(root)
    return d


def _b(obj) -> bytes:
    return json.dumps(obj).encode()


# --- decode: what the strict path accepts ------------------------------------------------


def test_float_token_counts_and_cost_are_decoded_as_numbers():
    doc = _doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "metrics": {
                    "prompt_tokens": 150.0,
                    "completion_tokens": 12,
                    "cached_tokens": 2.5,
                    "cost_usd": 1,
                },
            }
        ]
    )
    t = decode(_b(doc))
    assert t is not None
    assert t.steps[0].metrics == Metrics(
        prompt_tokens=150.0, completion_tokens=12, cached_tokens=2.5, cost_usd=1
    )
    assert type(t.steps[0].metrics.prompt_tokens) is float  # kept as recorded, not rounded


def test_unknown_fields_at_every_level_are_ignored():
    doc = _doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "reasoning_effort": "high",  # a v1.x field the Structs do not declare
                "future_field": {"x": 1},
                "metrics": {"prompt_tokens": 3, "prompt_token_ids": [1, 2], "logprobs": [0.1]},
                "tool_calls": [{"tool_call_id": "c", "function_name": "f", "new": True}],
                "observation": {
                    "results": [{"source_call_id": "c", "content": "o", "other": 1}],
                    "unknown": [],
                },
            }
        ],
        notes="n",
        extra={"k": 1},
        brand_new_root_key=[1, 2],
    )
    t = decode(_b(doc))
    assert t is not None
    s = t.steps[0]
    assert s.metrics == Metrics(prompt_tokens=3)
    assert s.tool_calls == [ToolCall(tool_call_id="c", function_name="f")]
    assert s.observation == Observation(
        results=[ObservationResult(source_call_id="c", content="o")]
    )


def test_every_field_is_optional():
    t = decode(b'{"steps": [{}], "schema_version": "ATIF-v1.8"}')
    assert t == Trajectory(schema_version="ATIF-v1.8", steps=[Step()])
    assert decode(b"{}") == Trajectory()


def test_free_form_values_keep_whatever_json_they_hold():
    parts = [{"type": "text", "text": "hi"}, {"type": "image", "source": {"path": "a.png"}}]
    doc = _doc(
        [
            {
                "message": parts,
                "reasoning_content": {"r": [1, None]},
                "extra": [1, "two"],
                "tool_calls": [{"arguments": "ls -la", "extra": 5}],
                "observation": {"results": [{"content": 3.5, "subagent_trajectory_ref": "x"}]},
            }
        ],
        agent="not an object",
        final_metrics=[1],
        session_id=7,
    )
    t = decode(_b(doc))
    assert t is not None
    s = t.steps[0]
    assert (s.message, s.reasoning_content, s.extra) == (parts, {"r": [1, None]}, [1, "two"])
    assert (s.tool_calls[0].arguments, s.tool_calls[0].extra) == ("ls -la", 5)
    r = s.observation.results[0]
    assert (r.content, r.subagent_trajectory_ref) == (3.5, "x")
    assert (t.agent, t.final_metrics, t.session_id) == ("not an object", [1], 7)


@pytest.mark.parametrize(
    "step",
    [
        {"step_id": "1"},
        {"step_id": True},  # a bool is not a number
        {"source": 5},
        {"timestamp": 1700000000},
        {"model_name": ["m"]},
        {"is_copied_context": 1},  # an int is not a bool
        {"llm_call_count": "2"},
        {"metrics": {"prompt_tokens": "12"}},
        {"metrics": {"cost_usd": False}},
        {"metrics": [1]},
        {"tool_calls": "ls"},
        {"tool_calls": [{"tool_call_id": 3}]},
        {"tool_calls": [7]},
        {"observation": {"results": [{"source_call_id": 9}]}},
        {"observation": {"results": "x"}},
        {"observation": "x"},
    ],
    ids=lambda s: json.dumps(s),
)
def test_a_value_of_another_type_than_declared_is_refused_by_the_strict_decoder(step):
    assert decode(_b(_doc([step]))) is None


@pytest.mark.parametrize(
    "raw",
    [b"[1, 2]", b'"ATIF-v1.7"', b"3", b"null", b'{"steps": {"1": {}}}', b'{"steps": ["x"]}'],
)
def test_documents_that_are_not_objects_with_a_steps_list_are_refused(raw):
    assert decode(raw) is None


def test_invalid_json_is_refused_not_raised():
    assert decode(b'{"steps": [') is None
    assert decode(b"") is None
    assert decode(b'{"steps": [], "x": NaN}') is None


def test_an_integer_of_twenty_digits_sends_the_file_to_the_generic_path():
    # 2**64 = 18446744073709551616 (20 digits): orjson reads it as a float, msgspec as an
    # int, so the strict decode must step aside for the two paths to agree
    doc = _b(_doc([{"step_id": 1, "extra": {"n": 18446744073709551616}}]))
    assert decode(doc) is None
    # the rule looks at digit runs, wherever they are (a string too)
    assert decode(_b(_doc([{"step_id": 1, "message": "id 12345678901234567890"}]))) is None


def test_a_negative_integer_below_the_int64_range_sends_the_file_to_the_generic_path():
    # -2**63 - 1 = -9223372036854775809 has 19 digits: orjson reads it as a float
    assert orjson.loads(b"-9223372036854775809") == -9.223372036854776e18
    doc = _b(_doc([{"step_id": 1, "extra": {"i": -9223372036854775809}}]))
    assert decode(doc) is None
    # the int64 minimum itself is an int to both
    assert orjson.loads(b"-9223372036854775808") == -(2**63)


def test_integers_that_fit_64_bits_stay_on_the_strict_path():
    # 2**63 - 1 = 9223372036854775807 and 2**64 - 1 = 18446744073709551615: orjson reads
    # both as ints, so msgspec agrees; 19 digits and 20 digits respectively
    t = decode(_b(_doc([{"step_id": 1, "extra": {"a": 9223372036854775807}}])))
    assert t is not None and t.steps[0].extra == {"a": 9223372036854775807}


@pytest.mark.parametrize("raise_limit", [0, 5000])
def test_a_document_nested_deeper_than_the_fixed_limit_is_refused(raise_limit):
    """How deep a file may nest is evalkit's rule (MAX_JSON_DEPTH), not the interpreter's
    recursion limit (which msgspec follows)."""
    deep = "1"
    for _ in range(MAX_JSON_DEPTH + 10):
        deep = "[" + deep + "]"
    shallow = "1"
    for _ in range(50):
        shallow = "[" + shallow + "]"
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + raise_limit)
    try:
        refused = decode(b'{"steps": [{"extra": ' + deep.encode() + b"}]}")
        kept = decode(b'{"steps": [{"extra": ' + shallow.encode() + b"}]}")
    finally:
        sys.setrecursionlimit(old)
    assert refused is None
    assert kept is not None and kept.steps[0].extra is not None


# --- is_atif --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"schema_version": "ATIF-v1.0"}, True),
        ({"schema_version": "ATIF-v9.9", "steps": []}, True),  # unknown versions read too
        ({"schema_version": "ATIF-"}, True),
        ({"steps": [], "agent": {}}, True),  # no version: Harbor reads it as v1.8
        ({"schema_version": None, "steps": [], "agent": {"name": "a"}}, True),
        ({"steps": [], "agent": "a"}, False),  # agent not an object
        ({"agent": {}}, False),  # no steps
        ({"steps": [], "agent": {}, "schema_version": "v1.8"}, False),
        ({"steps": [], "agent": {}, "schema_version": "atif-v1.8"}, False),  # case matters
        ({"steps": [], "agent": {}, "schema_version": 1.8}, False),
        ({"steps": [], "agent": {}, "schema_version": ""}, False),
    ],
)
def test_is_atif_follows_the_version_prefix_or_the_unversioned_shape(doc, expected):
    t = decode(_b(doc))
    assert t is not None
    assert is_atif(t) is expected
    assert is_atif(lenient(doc)[0]) is expected


# --- kind -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ({}, "object"),
        ([], "array"),
        ("s", "string"),
        (True, "boolean"),
        (3, "number"),
        (2.5, "number"),
    ],
)
def test_kind_names_the_json_kind_of_a_parsed_value(value, name):
    assert kind(value) == name


# --- lenient --------------------------------------------------------------------------


def test_lenient_reads_a_wrong_typed_scalar_as_null_and_keeps_the_rest():
    doc = _doc(
        [
            {
                "step_id": "1",
                "source": "agent",
                "timestamp": 5,
                "is_copied_context": 1,
                "llm_call_count": True,
                "model_name": "m",
                "metrics": {"prompt_tokens": "12", "completion_tokens": 4, "cost_usd": True},
            }
        ]
    )
    t, problems, n_bad = lenient(doc)
    assert (problems, n_bad) == ([], 0)
    s = t.steps[0]
    assert (s.step_id, s.source, s.timestamp, s.model_name) == (None, "agent", None, "m")
    assert (s.is_copied_context, s.llm_call_count) == (None, None)  # 1 is no bool, True no number
    assert s.metrics == Metrics(completion_tokens=4)


def test_lenient_nested_objects_of_the_wrong_kind_read_as_null():
    steps = [
        {"metrics": [1], "observation": "text"},
        {"observation": {"results": "x"}},
        {"observation": {"results": [5, {"source_call_id": 9, "content": "c"}, "y"]}},
    ]
    t, problems, _ = lenient(_doc(steps))
    assert (t.steps[0].metrics, t.steps[0].observation) == (None, None)
    assert t.steps[1].observation == Observation(results=None)
    # non-object results are dropped (no problem row); a wrong-typed id reads as null
    assert t.steps[2].observation == Observation(results=[ObservationResult(content="c")])
    assert problems == []


def test_lenient_skips_non_object_steps_and_counts_them():
    t, problems, n_bad = lenient(_doc(["x", {"step_id": 1}, 3, None, [], {"step_id": 2}]))
    assert [s.step_id for s in t.steps] == [1, 2]
    assert n_bad == 4  # "x", 3, None, []
    assert problems == []


def test_lenient_reports_non_object_tool_calls_with_the_trial_step_index():
    # start_index 10: the first object step is step 10 of the trial; "x" is not a step
    steps = [
        "x",
        {"tool_calls": [{"tool_call_id": "a"}, 1, "b"]},
        {"tool_calls": "ls -la"},
        {"tool_calls": {"tool_call_id": "c"}},
        {"tool_calls": None},
    ]
    t, problems, n_bad = lenient(_doc(steps), start_index=10)
    assert n_bad == 1
    assert problems == [
        ("bad_tool_call", "step 10: 2 tool call(s) are not JSON objects (skipped)"),
        ("bad_tool_call", "step 11: 'tool_calls' is a JSON string, not a list (skipped)"),
        ("bad_tool_call", "step 12: 'tool_calls' is a JSON object, not a list (skipped)"),
    ]
    assert [s.tool_calls for s in t.steps] == [[ToolCall(tool_call_id="a")], None, None, None]


@pytest.mark.parametrize(
    ("steps", "what"), [({"1": {}}, "object"), ("s", "string"), (3, "number"), (True, "boolean")]
)
def test_lenient_steps_that_are_not_a_list_read_no_steps_and_say_so(steps, what):
    t, problems, n_bad = lenient(_doc(steps))
    assert t.steps is None and n_bad == 0
    assert problems == [("bad_steps", f"'steps' is a JSON {what}, not a list: no steps read")]


def test_lenient_keeps_root_values_of_any_type():
    doc = {"schema_version": 1.7, "agent": [1], "final_metrics": "x", "trajectory_id": 3}
    t, _, _ = lenient(doc)
    assert (t.schema_version, t.agent, t.final_metrics, t.trajectory_id) == (1.7, [1], "x", 3)
    assert t.steps is None


def test_lenient_and_decode_agree_on_a_file_read_both_ways():
    doc = _doc(
        [
            {"step_id": 1, "source": "user", "message": "go", "timestamp": "2026-01-01T00:00:00Z"},
            {
                "step_id": 2,
                "source": "agent",
                "message": [{"type": "text", "text": "ok"}],
                "tool_calls": [
                    {"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "ls"}}
                ],
                "observation": {"results": [{"source_call_id": "c", "content": "a\nb"}]},
                "metrics": {"prompt_tokens": 10.0, "completion_tokens": 2, "cost_usd": 0.5},
                "is_copied_context": False,
                "llm_call_count": 1,
                "extra": {"k": "v"},
            },
        ],
        final_metrics={"total_prompt_tokens": 10},
        continued_trajectory_ref="trajectory.cont-1.json",
    )
    strict = decode(_b(doc))
    assert strict is not None
    assert lenient(orjson.loads(_b(doc))) == (strict, [], 0)


# --- property: the two paths give the same Structs ------------------------------------

# integers orjson and msgspec read alike ([-2**63, 2**64)) and shorter than the digit runs
# that send a file to the generic path (20 digits, or a minus and 19)
_int = st.integers(-(10**18) + 1, 10**19 - 1)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    _int,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_json = st.recursive(
    _scalar,
    lambda k: st.one_of(
        st.lists(k, max_size=3), st.dictionaries(st.text(max_size=4), k, max_size=3)
    ),
    max_leaves=6,
)
_num = st.one_of(st.none(), _int, st.floats(allow_nan=False, allow_infinity=False))
_str = st.one_of(st.none(), st.text(max_size=6))
_call = st.fixed_dictionaries(
    {},
    optional={"tool_call_id": _str, "function_name": _str, "arguments": _json, "extra": _json},
)
_result = st.fixed_dictionaries(
    {},
    optional={
        "source_call_id": _str,
        "content": _json,
        "subagent_trajectory_ref": _json,
        "extra": _json,
    },
)
_step = st.fixed_dictionaries(
    {},
    optional={
        "step_id": _num,
        "timestamp": _str,
        "source": _str,
        "model_name": _str,
        "message": _json,
        "reasoning_content": _json,
        "tool_calls": st.one_of(st.none(), st.lists(_call, max_size=2)),
        "observation": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {}, optional={"results": st.one_of(st.none(), st.lists(_result, max_size=2))}
            ),
        ),
        "metrics": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "prompt_tokens": _num,
                    "completion_tokens": _num,
                    "cached_tokens": _num,
                    "cost_usd": _num,
                },
            ),
        ),
        "is_copied_context": st.one_of(st.none(), st.booleans()),
        "llm_call_count": _num,
        "extra": _json,
        "unknown_key": _json,
    },
)
_well_typed = st.fixed_dictionaries(
    {"steps": st.one_of(st.none(), st.lists(_step, max_size=4))},
    optional={
        "schema_version": _json,
        "session_id": _json,
        "agent": _json,
        "final_metrics": _json,
        "continued_trajectory_ref": _json,
        "subagent_trajectories": _json,
        "notes": _json,
    },
)


@settings(max_examples=200, deadline=None)
@given(_well_typed)
def test_a_well_typed_document_gives_the_same_structs_both_ways(doc):
    data = json.dumps(doc).encode()
    strict = decode(data)
    assert strict is not None  # every value has a declared type: the strict path takes it
    assert lenient(orjson.loads(data)) == (strict, [], 0)


_wrong = st.one_of(_json, st.lists(st.one_of(_step, _json), max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["steps", "schema_version", "agent"]), _wrong, max_size=3))
def test_lenient_fields_always_have_their_declared_types(doc):
    t, problems, n_bad = lenient(doc)
    steps = doc.get("steps")
    if isinstance(steps, list):
        assert len(t.steps) + n_bad == len(steps)
    else:
        assert t.steps is None and n_bad == 0
    for s in t.steps or []:
        for v in (s.step_id, s.llm_call_count):
            assert v is None or type(v) in (int, float)
        for v in (s.timestamp, s.source, s.model_name):
            assert v is None or type(v) is str
        assert s.is_copied_context is None or type(s.is_copied_context) is bool
        assert s.tool_calls is None or all(type(c) is ToolCall for c in s.tool_calls)
        assert s.metrics is None or type(s.metrics) is Metrics
    assert all(k in ("bad_steps", "bad_tool_call") for k, _ in problems)
