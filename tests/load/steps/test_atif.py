"""steps/atif.py: one ATIF document -> rows appended to a column accumulator.

Checked at the level of the module's own functions: the accumulator (``as_columns``,
``Acc``), ``atif_version``, ``sniff`` (what a non-ATIF document is said to be),
``content_text`` (content parts as text), the token and cost columns (v1.0/v1.1 prompt
tokens made to include cached, integral floats kept, the rest null), and ``add_document``:
the per-document result (agent-step and call counts, final metrics, continuation,
subagent references, embedded subagents), the labels every row carries, the model-name
fallback, observations joined to calls and the structured error signals handed on in the
working columns. A Struct document and the same document as a dict give the same rows.
"""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings

from evalkit.load.steps.atif import (
    Acc,
    DocResult,
    _usage_columns,
    add_document,
    as_columns,
    atif_version,
    content_text,
    sniff,
)
from evalkit.load.steps.atif_schema import Metrics, Step, decode
from evalkit.load.steps.columns import CALL_FIELDS, STEP_FIELDS
from tests.load.steps.test_properties import doc as random_doc


def _doc(steps: list, version: str = "ATIF-v1.7", **root) -> dict:
    d = {"schema_version": version, "session_id": "s", "agent": {"name": "a"}, "steps": steps}
    d.update(root)
    return d


def _add(doc, acc: Acc | None = None, **kw) -> tuple[Acc, DocResult]:
    acc = acc if acc is not None else Acc()
    kw = {
        "trial_id": "t",
        "start_index": 0,
        "trajectory": "main",
        "is_main": True,
        "task_step": None,
        **kw,
    }
    return acc, add_document(acc, doc, **kw)


def _calls(acc: Acc) -> list[dict]:
    return [dict(zip(CALL_FIELDS, r, strict=True)) for r in acc.calls]


# --- accumulator ----------------------------------------------------------------------


def test_as_columns_transposes_rows_and_gives_empty_lists_for_no_rows():
    assert as_columns([], ("a", "b")) == {"a": [], "b": []}
    assert as_columns([(1, "x"), (2, "y")], ("a", "b")) == {"a": (1, 2), "b": ("x", "y")}


def test_acc_counts_steps_and_extends_with_another_accumulator():
    a, _ = _add(_doc([{"source": "agent"}, {"source": "user"}]))
    b, _ = _add(
        _doc([{"source": "agent", "tool_calls": [{"tool_call_id": "c", "function_name": "f"}]}]),
        trial_id="u",
    )
    assert (a.n_steps, b.n_steps) == (2, 1)
    a.extend(b)
    assert a.n_steps == 3 and a.step_columns()["trial_id"] == ["t", "t", "u"]
    assert a.call_columns()["tool_call_id"] == ("c",)
    assert set(a.step_columns()) == set(STEP_FIELDS)
    assert Acc().call_columns() == {f: [] for f in CALL_FIELDS}


# --- atif_version ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sv", "expected"),
    [
        ("ATIF-v1.0", (1, 0)),
        ("ATIF-v1.8", (1, 8)),
        ("ATIF-v1.10", (1, 10)),  # numbers, not text: 1.10 is after 1.9
        ("ATIF-v2.3-rc1", (2, 3)),
        ("ATIF-v1", None),
        ("atif-v1.2", None),
        (" ATIF-v1.2", None),
        ("v1.2", None),
        (1.2, None),
        (None, None),
    ],
)
def test_atif_version_reads_major_and_minor(sv, expected):
    assert atif_version(sv) == expected


# --- sniff ----------------------------------------------------------------------------


def test_sniff_accepts_atif_and_the_unversioned_shape():
    assert sniff({"schema_version": "ATIF-v1.2"}) is None
    assert sniff({"steps": [], "agent": {}}) is None


@pytest.mark.parametrize(
    ("doc", "text"),
    [
        ({}, "a JSON object with keys (none) (schema_version None)"),
        (
            {"schema_version": "1.0", "b": 1, "a": 2},
            "a JSON object with keys a, b, schema_version (schema_version '1.0')",
        ),
        (
            {k: 1 for k in "jihgfedcba"},  # sorted, the first 8 only
            "a JSON object with keys a, b, c, d, e, f, g, h (schema_version None)",
        ),
        ({"steps": {}, "agent": {}}, "a JSON object with keys agent, steps (schema_version None)"),
        (
            [{"response": "r", "prompt": "p", "episode": 0}] * 3,
            "a JSON list of 3 items with keys episode, prompt, response"
            " (an episode log, e.g. terminus-2-skills)",
        ),
        (
            [{"command": "ls", "output": "", "return_code": 0}],
            "a JSON list of 1 items with keys command, output, return_code"
            " (a command log, e.g. Harbor's oracle)",
        ),
        ([1, {"z": 1, "y": 2}], "a JSON list of 2 items with keys y, z"),  # first object item
        ([1, 2], "a JSON list of 2 items"),
        ([], "a JSON list of 0 items"),
        ("text", "a JSON string"),  # JSON's names for the kinds, not Python's
        (4, "a JSON number"),
        (None, "a JSON null"),
        (True, "a JSON boolean"),
    ],
)
def test_sniff_says_what_a_non_atif_document_is(doc, text):
    assert sniff(doc) == text


# --- content_text ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, None),
        ("as is\n", "as is\n"),
        ([], ""),
        (["a", "b"], "a\nb"),
        ([{"type": "text", "text": "x"}, {"text": "y"}], "x\ny"),  # a typeless part with text
        ([{"type": "text", "text": 5}], ""),  # text part whose text is not a string
        (
            [{"type": "image", "source": {"path": "a.png", "media_type": "image/png"}}],
            "[image: a.png]",
        ),
        ([{"type": "image", "source": {"url": "https://x/a.png"}}], "[image: https://x/a.png]"),
        ([{"type": "audio", "source": {"media_type": "audio/wav"}}], "[audio: audio/wav]"),
        ([{"type": "image"}], "[image]"),
        ([{"type": "video", "source": "not an object"}], "[video]"),
        (["a", 3, None, {"type": "text", "text": "b"}], "a\nb"),  # other items are skipped
        ({"k": [1, 2]}, '{"k":[1,2]}'),  # not a list of parts: its JSON text
        (2.5, "2.5"),
        (True, "true"),
    ],
)
def test_content_text_joins_parts_and_shows_media_as_placeholders(content, text):
    assert content_text(content) == text


# --- token and cost columns -----------------------------------------------------------


def _steps(*metrics: dict | None) -> list[Step]:
    return [Step(metrics=Metrics(**m) if m is not None else None) for m in metrics]


@pytest.mark.parametrize(
    ("version", "prompt"),
    [((1, 0), 140), ((1, 1), 140), ((1, 2), 100), ((1, 8), 100), (None, 100), ((0, 9), 140)],
)
def test_prompt_tokens_include_cached_before_v1_2(version, prompt):
    # 100 prompt + 40 cached = 140 where prompt excluded cached (before v1.2)
    pt, ct, ca, cost = _usage_columns(_steps({"prompt_tokens": 100, "cached_tokens": 40}), version)
    assert (pt, ct, ca, cost) == ([prompt], [None], [40], [None])


def test_pre_v1_2_normalisation_needs_both_counts():
    pt, _, _, _ = _usage_columns(
        _steps(
            {"cached_tokens": 40},
            {"prompt_tokens": 7, "cached_tokens": 0},
            {"prompt_tokens": 7},
            None,
        ),
        (1, 0),
    )
    assert pt == [None, 7, 7, None]


def test_token_counts_keep_integral_floats_and_drop_the_rest():
    pt, ct, ca, _ = _usage_columns(
        _steps(
            {"prompt_tokens": 150.0, "completion_tokens": 2.5, "cached_tokens": -0.0},
            {"prompt_tokens": float("inf"), "completion_tokens": 1e30, "cached_tokens": 7},
        ),
        (1, 8),
    )
    assert pt == [150, None]
    assert type(pt[0]) is int
    assert ct == [None, None]  # 2.5 is no count; 1e30 does not fit int64
    assert ca == [0, 7]


def test_cost_keeps_finite_numbers_as_floats():
    _, _, _, cost = _usage_columns(
        _steps(
            {"cost_usd": 0.25},
            {"cost_usd": 1},
            {"cost_usd": float("inf")},
            {"cost_usd": float("nan")},
            {"cost_usd": -float("inf")},
        ),
        (1, 8),
    )
    assert cost == [0.25, 1.0, None, None, None]
    assert type(cost[1]) is float


# --- add_document: the document result ------------------------------------------------


def test_agent_steps_and_their_calls_are_counted_without_copied_context_or_sidechains():
    call = {"tool_call_id": "c", "function_name": "f"}
    steps = [
        {"source": "system"},
        {"source": "user"},
        {"source": "agent", "tool_calls": [call, call]},  # counted: 1 step, 2 calls
        {"source": "agent", "is_copied_context": True, "tool_calls": [call]},  # replayed
        {"source": "agent", "extra": {"is_sidechain": True}, "tool_calls": [call]},  # subagent
        {"source": "agent", "extra": {"is_sidechain": "yes"}},  # not the boolean: counted
        {"source": "agent", "is_copied_context": False, "tool_calls": []},  # counted
    ]
    acc, res = _add(_doc(steps))
    assert (res.n_agent_steps, res.n_tool_calls) == (3, 2)
    S = acc.step_columns()
    assert S["n_tool_calls"] == [0, 0, 2, 1, 1, 0, 0]
    assert S["is_sidechain"] == [False, False, False, False, True, False, False]
    assert S["is_main"] == [True, True, True, True, False, True, True]
    # the sidechain step's call is not the main agent's either
    assert [c["is_main"] for c in _calls(acc)] == [True, True, True, False]


def test_the_document_result_reads_version_final_metrics_continuation_and_embedded():
    emb = [_doc([], trajectory_id="e1"), "not an object", 5, {"steps": []}]
    _, res = _add(
        _doc(
            [{"source": "agent"}],
            version="ATIF-v1.5",
            final_metrics={"total_prompt_tokens": 3},
            continued_trajectory_ref="trajectory.cont-1.json",
            subagent_trajectories=emb,
        )
    )
    assert res.version == (1, 5)
    assert res.final_metrics == {"total_prompt_tokens": 3}
    assert res.continued_ref == "trajectory.cont-1.json"
    assert res.embedded == [emb[0], emb[3]]  # the objects only
    assert (res.n_bad_steps, res.problems) == (0, [])


@pytest.mark.parametrize(
    ("root", "final", "ref"),
    [
        ({"final_metrics": [1], "continued_trajectory_ref": ""}, None, None),
        ({"final_metrics": "x", "continued_trajectory_ref": 3}, None, None),
        ({}, None, None),
    ],
)
def test_final_metrics_and_continuation_of_the_wrong_kind_are_absent(root, final, ref):
    _, res = _add(_doc([{"source": "agent"}], **root))
    assert (res.final_metrics, res.continued_ref, res.embedded) == (final, ref, [])


def test_a_document_without_steps_still_gives_its_document_result():
    acc, res = _add(
        _doc([], final_metrics={"total_cost_usd": 1.0}, continued_trajectory_ref="c.json")
    )
    assert acc.n_steps == 0 and acc.calls == []
    assert (res.final_metrics, res.continued_ref) == ({"total_cost_usd": 1.0}, "c.json")
    acc, res = _add({"schema_version": "ATIF-v1.7", "steps": None, "final_metrics": {"a": 1}})
    assert acc.n_steps == 0 and res.final_metrics == {"a": 1}


def test_subagent_references_in_results_are_collected_as_objects():
    results = [
        {"content": "a", "subagent_trajectory_ref": [{"trajectory_path": "s1.json"}, "x", 3]},
        {"content": "b", "subagent_trajectory_ref": {"trajectory_id": "s2"}},
        {"content": "c", "subagent_trajectory_ref": "s3.json"},  # neither: ignored
        {"content": "d", "subagent_trajectory_ref": []},
    ]
    _, res = _add(_doc([{"source": "agent", "observation": {"results": results}}]))
    assert res.subagent_refs == [{"trajectory_path": "s1.json"}, {"trajectory_id": "s2"}]


def test_a_dict_document_reports_its_bad_steps_and_calls_in_the_result():
    doc = _doc(["x", {"source": "agent", "tool_calls": ["y"]}, 3])
    acc, res = _add(doc, start_index=4)
    assert res.n_bad_steps == 2 and acc.n_steps == 1
    assert res.problems == [
        ("bad_tool_call", "step 4: 1 tool call(s) are not JSON objects (skipped)")
    ]


# --- add_document: the rows -----------------------------------------------------------


def test_rows_carry_the_trial_labels_and_a_trial_level_step_index():
    doc = _doc(
        [
            {"step_id": 1, "source": "agent", "timestamp": "2026-01-01T00:00:00Z"},
            {
                "step_id": 2,
                "source": "agent",
                "timestamp": "t2",
                "tool_calls": [
                    {"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "ls"}}
                ],
            },
        ]
    )
    acc, _ = _add(
        doc, trial_id="tr", start_index=5, trajectory="sub-1", is_main=False, task_step="build"
    )
    S = acc.step_columns()
    assert S["step_index"] == [5, 6] and S["step_id"] == [1, 2]
    assert S["trial_id"] == ["tr", "tr"] and S["trajectory"] == ["sub-1", "sub-1"]
    assert S["is_main"] == [False, False] and S["task_step"] == ["build", "build"]
    assert S["_ts"] == ["2026-01-01T00:00:00Z", "t2"]  # raw text: parsed later (derive.py)
    assert S["llm_retries"] == [None, None]  # a go-code count
    (c,) = _calls(acc)
    assert (c["trial_id"], c["step_index"], c["call_index"], c["trajectory"]) == (
        "tr",
        6,
        0,
        "sub-1",
    )
    assert (c["is_main"], c["task_step"], c["_ts"]) == (False, "build", "t2")
    assert (c["arguments"], c["command"]) == ('{"command":"ls"}', "ls")
    assert (c["duration_ms"], c["_sig"]) == (None, None)  # go-code only


def test_agent_model_name_is_the_default_of_agent_steps_only():
    steps = [
        {"source": "system"},
        {"source": "agent"},
        {"source": "agent", "model_name": "own"},
        {"source": "user", "model_name": "u"},
    ]
    acc, _ = _add(_doc(steps, agent={"name": "a", "model_name": "default-m"}))
    assert acc.step_columns()["model_name"] == [None, "default-m", "own", "u"]
    acc, _ = _add(_doc([{"source": "agent"}], agent={"model_name": 5}))
    assert acc.step_columns()["model_name"] == [None]
    acc, _ = _add(_doc([{"source": "agent"}], agent="a"))
    assert acc.step_columns()["model_name"] == [None]


def test_step_texts_ids_and_extra_as_recorded_or_json_text():
    steps = [
        {
            "step_id": 3.0,
            "message": [
                {"type": "text", "text": "a"},
                {"type": "image", "source": {"path": "p.png"}},
            ],
            "reasoning_content": {"why": "x"},
            "llm_call_count": 2.0,
            "extra": {"b": 1, "a": [True, None]},
        },
        {
            "step_id": 2.5,
            "message": 7,
            "reasoning_content": "plain",
            "llm_call_count": 1.5,
            "extra": {},
        },
        {"extra": []},
    ]
    acc, _ = _add(_doc(steps))
    S = acc.step_columns()
    assert S["step_id"] == [3, None, None]  # integral float kept; 2.5 is no id
    assert S["message"] == ["a\n[image: p.png]", "7", None]
    assert S["reasoning_content"] == ['{"why":"x"}', "plain", None]
    assert S["llm_call_count"] == [2, None, None]
    assert S["extra"][0] == '{"b":1,"a":[true,null]}'  # key order as recorded
    assert S["extra"][1:] == [None, None]  # empty extra: nothing recorded


def test_results_join_their_call_and_the_only_call_of_a_step_gets_step_text():
    steps = [
        {  # one call, results without ids: the step-level text is also the call's
            "tool_calls": [{"tool_call_id": "a", "function_name": "bash_command"}],
            "observation": {"results": [{"content": "out1"}, {"content": "out2"}]},
        },
        {  # two calls, no ids: the text stays on the step
            "tool_calls": [{"tool_call_id": "b"}, {"tool_call_id": "c"}],
            "observation": {"results": [{"content": "shared"}]},
        },
        {  # an id-matched result with no content: the step text goes to the call
            "tool_calls": [{"tool_call_id": "d"}],
            "observation": {"results": [{"source_call_id": "d"}, {"content": "screen"}]},
        },
        {  # a call without id never takes id-matched text
            "tool_calls": [{"function_name": "x"}],
            "observation": {"results": [{"source_call_id": "e", "content": "orphan"}]},
        },
        {"observation": {"results": [{"content": [{"type": "text", "text": "no calls"}]}]}},
    ]
    acc, _ = _add(_doc(steps))
    got = [(c["tool_call_id"], c["observation"], c["observation_source"]) for c in _calls(acc)]
    assert got == [
        ("a", "out1\nout2", "step"),
        ("b", None, None),
        ("c", None, None),
        ("d", "screen", "step"),
        (None, "orphan", "step"),
    ]
    assert acc.step_columns()["observation"] == [
        "out1\nout2",
        "shared",
        "screen",
        "orphan",
        "no calls",
    ]


def test_structured_signals_of_the_call_and_its_results_go_to_the_working_columns():
    steps = [
        {
            "tool_calls": [
                {"tool_call_id": "a", "function_name": "run", "extra": {"exit_code": 3}},
                {"tool_call_id": "b", "function_name": "Read"},
                {"tool_call_id": "c", "function_name": "Read"},
            ],
            "observation": {
                "results": [
                    {"source_call_id": "b", "content": "x", "extra": {"is_error": True}},
                    {"source_call_id": "zz", "content": "y", "extra": {"is_error": True}},
                ]
            },
        }
    ]
    acc, _ = _add(_doc(steps))
    got = [(c["tool_call_id"], c["_s_err"], c["_s_exit"]) for c in _calls(acc)]
    # a: exit code 3 (non-zero: an error); b: its result's is_error; c: nothing structured
    # (the 'zz' result names no call of the step: its extra is no call's)
    assert got == [("a", True, 3), ("b", True, None), ("c", None, None)]


def test_a_struct_document_and_the_same_dict_give_the_same_rows():
    doc = _doc(
        [
            {"step_id": 1, "source": "user", "message": "go"},
            {
                "step_id": 2,
                "source": "agent",
                "message": [{"type": "text", "text": "ok"}],
                "metrics": {"prompt_tokens": 10.0, "cached_tokens": 4, "cost_usd": 0.5},
                "tool_calls": [
                    {"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "ls"}}
                ],
                "observation": {
                    "results": [{"source_call_id": "c", "content": "a", "extra": {"exit_code": 0}}]
                },
                "extra": {"is_sidechain": False},
            },
        ],
        version="ATIF-v1.1",
        final_metrics={"total_prompt_tokens": 10},
    )
    struct = decode(orjson.dumps(doc))
    assert struct is not None
    a, ra = _add(struct)
    b, rb = _add(doc)
    assert a.step_columns() == b.step_columns() and a.calls == b.calls
    assert ra == rb
    assert a.step_columns()["prompt_tokens"] == [None, 14]  # v1.1: 10 + 4 cached


@settings(max_examples=150, deadline=None)
@given(random_doc)
def test_decoded_and_generic_documents_give_the_same_rows(d):
    """Whatever the file holds: when the strict decoder takes it, the rows equal those of
    the generically parsed document (the rule that lets the loader pick either path)."""
    data = json.dumps(d).encode()
    struct = decode(data)
    if struct is None:
        return
    parsed = orjson.loads(data)
    if parsed != json.loads(data):  # integers beyond 64 bits: orjson reads floats
        return
    a, ra = _add(struct)
    b, rb = _add(parsed)
    assert a.step_columns() == b.step_columns() and a.calls == b.calls
    assert (ra.n_agent_steps, ra.n_tool_calls, ra.subagent_refs) == (
        rb.n_agent_steps,
        rb.n_tool_calls,
        rb.subagent_refs,
    )
