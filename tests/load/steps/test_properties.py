"""Property tests: random ATIF-like documents and random bytes never crash the parser."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.load.steps import read_trajectory
from evalkit.load.steps.atif import Acc, add_document
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.steps.derive import calls_frame, steps_frame

scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
anything = st.recursive(
    scalar,
    lambda k: st.one_of(
        st.lists(k, max_size=3), st.dictionaries(st.text(max_size=6), k, max_size=3)
    ),
    max_leaves=8,
)


def maybe(strategy):
    return st.one_of(strategy, anything)


part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "video"])},
    optional={
        "text": maybe(st.text(max_size=10)),
        "source": maybe(st.fixed_dictionaries({}, optional={"path": maybe(st.text(max_size=8))})),
    },
)
call = st.fixed_dictionaries(
    {},
    optional={
        "tool_call_id": maybe(st.sampled_from(["a", "b", "c"])),
        "function_name": maybe(st.sampled_from(["bash", "Read", "bash_command", "x"])),
        "arguments": maybe(
            st.dictionaries(
                st.sampled_from(["command", "keystrokes", "cmd", "path"]), anything, max_size=3
            )
        ),
        "extra": maybe(
            st.dictionaries(
                st.sampled_from(["is_error", "exit_code", "status", "error"]), anything, max_size=2
            )
        ),
    },
)
result = st.fixed_dictionaries(
    {},
    optional={
        "source_call_id": maybe(st.sampled_from(["a", "b", "zz"])),
        "content": maybe(st.one_of(st.text(max_size=30), st.lists(part, max_size=3))),
        "subagent_trajectory_ref": maybe(
            st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "trajectory_id": maybe(st.text(max_size=4)),
                        "trajectory_path": maybe(st.text(max_size=8)),
                    },
                ),
                max_size=2,
            )
        ),
        "extra": anything,
    },
)
step = st.fixed_dictionaries(
    {},
    optional={
        "step_id": anything,
        "source": maybe(st.sampled_from(["system", "user", "agent"])),
        "message": maybe(st.one_of(st.text(max_size=20), st.lists(part, max_size=3))),
        "timestamp": maybe(
            st.sampled_from(
                ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+05:00", "bad", "2026-01-01 10:00:00"]
            )
        ),
        "tool_calls": maybe(st.lists(maybe(call), max_size=3)),
        "observation": maybe(
            st.fixed_dictionaries(
                {}, optional={"results": maybe(st.lists(maybe(result), max_size=3))}
            )
        ),
        "metrics": maybe(
            st.dictionaries(
                st.sampled_from(
                    ["prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"]
                ),
                anything,
                max_size=4,
            )
        ),
        "is_copied_context": anything,
        "llm_call_count": anything,
        "reasoning_content": anything,
        "extra": anything,
    },
)
doc = st.fixed_dictionaries(
    {"steps": maybe(st.lists(maybe(step), max_size=5))},
    optional={
        "schema_version": maybe(
            st.sampled_from(["ATIF-v1.0", "ATIF-v1.2", "ATIF-v1.5", "ATIF-v1.8", "ATIF-vX"])
        ),
        "agent": maybe(st.fixed_dictionaries({}, optional={"model_name": anything})),
        "final_metrics": anything,
        "continued_trajectory_ref": anything,
        "subagent_trajectories": maybe(st.lists(anything, max_size=2)),
    },
)


@settings(max_examples=150, deadline=None)
@given(doc)
def test_random_atif_like_documents_never_crash(d):
    acc = Acc()
    res = add_document(
        acc, d, trial_id="t", start_index=0, trajectory="main", is_main=True, task_step=None
    )
    steps, calls = steps_frame(acc.step_columns()), calls_frame(acc.call_columns())
    assert steps.columns == [c.name for c in STEP_COLUMNS]
    assert calls.columns == [c.name for c in TOOL_CALL_COLUMNS]
    n_dict_steps = (
        sum(isinstance(s, dict) for s in d["steps"]) if isinstance(d["steps"], list) else 0
    )
    assert steps.height == n_dict_steps
    assert res.n_agent_steps <= n_dict_steps
    assert steps["step_index"].to_list() == list(range(steps.height))
    if calls.height:
        assert calls["step_index"].is_in(steps["step_index"].to_list()).all()
        assert (calls["is_error"].is_null() == calls["is_error_source"].is_null()).all()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=200), doc.map(lambda d: json.dumps(d).encode())))
def test_random_files_never_crash(tmp_path, data):
    p = tmp_path / "trajectory.json"
    p.write_bytes(data)
    steps, calls, summary, errors = read_trajectory(p, trial_id="t")
    assert isinstance(steps, pl.DataFrame) and isinstance(calls, pl.DataFrame)
    assert summary.height in (0, 1)
    assert summary.height == 1 or errors  # not parsed -> said why
