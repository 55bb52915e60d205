"""Every ATIF fixture loads; exact counts, token sums and joins checked by reading the files.

Expected numbers were computed with the stdlib json module over the raw files (see the
comments), not with evalkit.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalkit.load.steps import read_trajectory
from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from tests.load.steps.steps_helpers import ATIF, GOLDEN, HERMES, NATIVE

ALL_JSON = sorted(p for p in ATIF.rglob("*.json") if "native" not in p.parts)


def _is_atif(p) -> bool:
    d = json.loads(p.read_text())
    return isinstance(d, dict) and str(d.get("schema_version", "")).startswith("ATIF-")


@pytest.mark.parametrize("path", ALL_JSON, ids=lambda p: str(p.relative_to(ATIF)))
def test_every_fixture_file_loads(path):
    steps, calls, summary, errors = read_trajectory(path, trial_id="t")
    assert [c.name for c in STEP_COLUMNS] == steps.columns
    assert [c.name for c in TOOL_CALL_COLUMNS] == calls.columns
    if _is_atif(path):
        assert steps.height == len(json.loads(path.read_text())["steps"]) or steps.height > 0
        assert summary.height == 1
        # the only errors an ATIF fixture may give: subagent files the golden set lacks
        assert {e.error_type for e in errors} <= {"missing_subagent"}
        assert steps["step_index"].to_list() == list(range(steps.height))
    else:  # *.traces.json and oracle command logs are not ATIF
        assert steps.height == 0 and summary.height == 0
        assert [e.error_type for e in errors] == ["not_atif"]


# (file, step rows, tool-call rows, agent steps, sum prompt, sum completion, sum cached, sum cost)
# computed with json: sum over steps of metrics.* (missing = 0 for tokens, null for cost).
EXACT = [
    ("claude-code-real/trajectory_pass.json", 12, 12, 11, 485630, 3304, 461807, None),
    ("claude-code-real/trajectory_fail.json", 40, 46, 39, 4013056, 9685, 3896650, None),
    ("examples/run-level.trajectory.json", 3, 1, 2, 37933, 107, 32693, None),
    ("harbor-golden/openhands/hello-world.trajectory.json", 6, 2, 2, 220, 80, None, 0.00135),
    ("harbor-golden/terminus_2/hello-world.trajectory.json", 5, 4, 4, 3227, 220, None, 0.0102675),
    (
        "harbor-golden/terminus_2/hello-world-timeout.trajectory.json",
        4,
        3,
        3,
        882,
        115,
        None,
        0.003355,
    ),
    (
        "harbor-golden/terminus_2/hello-world-invalid-json.trajectory.json",
        5,
        3,
        4,
        2417,
        200,
        None,
        0.0080425,
    ),
    ("harbor-golden/oracle/exit_code_trajectory.json", 3, 2, 2, None, None, None, None),
]


@pytest.mark.parametrize(
    "rel,n_steps,n_calls,n_agent,pt,ct,ca,cost", EXACT, ids=[e[0] for e in EXACT]
)
def test_exact_counts_and_token_sums(rel, n_steps, n_calls, n_agent, pt, ct, ca, cost):
    steps, calls, summary, errors = read_trajectory(ATIF / rel, trial_id="t")
    assert errors == []
    assert steps.height == n_steps
    assert calls.height == n_calls
    assert summary["n_steps"].item() == n_agent == steps.filter(pl.col("source") == "agent").height
    assert summary["n_tool_calls"].item() == n_calls
    assert steps["prompt_tokens"].sum() == (pt or 0)
    assert steps["completion_tokens"].sum() == (ct or 0)
    assert steps["cached_tokens"].sum() == (ca or 0)
    if cost is None:
        assert steps["cost_usd"].null_count() == steps.height
    else:
        assert steps["cost_usd"].sum() == pytest.approx(cost)


def test_claude_code_final_metrics_and_observation_join():
    steps, calls, summary, _ = read_trajectory(
        ATIF / "claude-code-real/trajectory_pass.json", trial_id="t"
    )
    row = summary.row(0, named=True)
    # final_metrics of the file: 485630 / 3304 / 461807 / 0.462381
    assert (
        row["final_prompt_tokens"],
        row["final_completion_tokens"],
        row["final_cached_tokens"],
    ) == (485630, 3304, 461807)
    assert row["final_cost_usd"] == pytest.approx(0.462381)
    # step_id 2 made a Read then a Bash; each result names its call
    s2 = calls.filter(pl.col("step_index") == 1).sort("call_index")
    assert s2["function_name"].to_list() == ["Read", "Bash"]
    assert s2["tool_call_id"].to_list() == [
        "toolu_vrtx_01DMAvK6aCFYSU2EZmeSe8Ha",
        "toolu_vrtx_018vAE2TokScga3sbmCF56xd",
    ]
    assert s2["observation"][0].startswith("1\t/*\n2\tCopyright 2025.")
    assert s2["observation"][1].startswith(
        "/repo/maas-controller/pkg/controller/maas/providers_llmisvc_test.go\n---"
    )
    assert s2["observation_source"].to_list() == ["call_id", "call_id"]
    assert s2["command"][0] is None and s2["command"][1].startswith(
        "ls /repo/maas-controller/pkg/controller/maas/providers_llmisvc_test.go"
    )
    assert steps["timestamp"][0].isoformat() == "2026-06-16T12:35:24.221000+00:00"
    assert steps["model_name"][1] == "claude-opus-4-6"


def test_claude_code_fail_commands_and_exit_marker():
    _, calls, _, _ = read_trajectory(ATIF / "claude-code-real/trajectory_fail.json", trial_id="t")
    bash = calls.filter(pl.col("function_name") == "Bash")
    assert bash.height == 13 and bash["command"].null_count() == 0
    assert calls.filter(pl.col("command").is_not_null()).height == 13  # only Bash runs a shell
    # TaskOutput (step_id 34) prints <exit_code>0</exit_code>
    t = calls.filter((pl.col("function_name") == "TaskOutput") & pl.col("exit_code").is_not_null())
    assert t["exit_code"].to_list() == [0] and t["is_error"].to_list() == [False]
    assert t["is_error_source"].to_list() == ["exit_code"]
    assert calls["is_error"].sum() == 0


def test_terminus2_keystrokes_and_step_level_observation():
    steps, calls, _, _ = read_trajectory(
        GOLDEN / "terminus_2/hello-world.trajectory.json", trial_id="t"
    )
    assert calls["function_name"].to_list() == [
        "bash_command",
        "bash_command",
        "mark_task_complete",
        "mark_task_complete",
    ]
    # keystrokes "printf 'Hello, world!\\n' > hello.txt\n": trailing newline stripped
    assert calls["command"].to_list() == [
        "printf 'Hello, world!\\n' > hello.txt",
        "cat hello.txt",
        None,
        None,
    ]
    # v1.3 results carry no source_call_id: kept on the step, and given to the step's only call
    assert calls["observation_source"].to_list() == ["step"] * 4
    assert steps["observation"][1] == calls["observation"][0]
    assert calls["observation"][0].startswith(
        "New Terminal Output:\n\nroot@80c014d564ce:/app# printf"
    )
    assert steps["reasoning_content"][1].startswith("First, I need to understand the task")
    assert calls["retried"].to_list() == [
        False,
        False,
        False,
        True,
    ]  # 2nd identical mark_task_complete


def test_oracle_exit_code_golden():
    _, calls, _, _ = read_trajectory(GOLDEN / "oracle/exit_code_trajectory.json", trial_id="t")
    # `false` -> the oracle prints "Exit Code: 1"; `echo "Exit code: $?"` prints "Exit code: 1"
    assert calls["command"].to_list() == ["false", 'echo "Exit code: $?"']
    assert calls["exit_code"].to_list() == [1, None]
    assert calls["is_error"].to_list() == [True, False]


def test_openhands_observation_missing_is_unknown():
    _, calls, _, _ = read_trajectory(GOLDEN / "openhands/hello-world.trajectory.json", trial_id="t")
    assert calls["function_name"].to_list() == ["str_replace_editor", "finish"]
    assert calls["command"].to_list() == [None, None]  # 'command': 'create' is an editor verb
    assert calls["observation"].to_list() == ["File created successfully at: /app/hello.txt", None]
    assert calls["is_error"].to_list() == [False, None]


def test_continuation_stitched_into_main():
    f = GOLDEN / "terminus_2/hello-world-context-summarization-linear-history.trajectory.json"
    steps, calls, summary, errors = read_trajectory(f, trial_id="t")
    # main file 5 steps + cont-1 8 steps (4 copied context)
    assert steps.height == 13 and calls.height == 0
    assert steps["trajectory"].unique().to_list() == ["main"]
    assert steps["step_id"].to_list() == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8]
    assert steps["is_copied_context"].to_list() == [None] * 5 + [True] * 4 + [None] * 4
    assert summary["n_steps"].item() == 3 + 4  # copied agent step excluded
    # final_metrics come from the last file of the chain (cumulative): 7802 / 1030 / 0.029805
    assert summary["final_prompt_tokens"].item() == 7802
    assert summary["final_cost_usd"].item() == pytest.approx(0.029805)
    # the golden set has no summarization files for this variant: reported, not fatal
    assert sorted(e.error_type for e in errors) == ["missing_subagent"] * 3


def test_summarization_subagents_labelled_and_after_main():
    f = GOLDEN / "terminus_2/hello-world-context-summarization.trajectory.json"
    steps, calls, summary, errors = read_trajectory(f, trial_id="t")
    assert errors == []
    counts = steps.group_by("trajectory", maintain_order=True).len().rows()
    # 10 main steps, then the three files in reference order (5, 2, 7 steps)
    assert counts == [
        ("main", 10),
        ("summarization-1-summary", 5),
        ("summarization-1-questions", 2),
        ("summarization-1-answers", 7),
    ]
    assert steps.filter(pl.col("is_main"))["step_index"].to_list() == list(range(10))
    assert summary["n_steps"].item() == 7 and summary["n_tool_calls"].item() == 7
    assert calls.filter(~pl.col("is_main")).height == 4


def test_hermes_trajectories():
    files = sorted(HERMES.rglob("trajectory.json"))
    assert len(files) == 11
    tot_steps = tot_calls = tot_agent = 0
    for f in files:
        steps, calls, summary, errors = read_trajectory(f, trial_id=f.parent.parent.name)
        assert errors == []
        assert steps["timestamp"].null_count() == steps.height  # hermes writes no timestamps
        tot_steps, tot_calls = tot_steps + steps.height, tot_calls + calls.height
        tot_agent += summary["n_steps"].item()
    assert (tot_steps, tot_calls, tot_agent) == (46, 12, 29)


def test_hermes_json_envelope_is_structured():
    # 11 of the 12 hermes tool results are {"success": true, ...}; one has no success key
    srcs = []
    for f in sorted(HERMES.rglob("trajectory.json")):
        _, calls, _, _ = read_trajectory(f, trial_id="t")
        srcs += list(
            zip(calls["is_error_source"].to_list(), calls["is_error"].to_list(), strict=True)
        )
    assert sorted(srcs) == [("structured", False)] * 11 + [("text", False)]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in NATIVE.rglob("*") if p.is_file() and p.name != "SOURCES.md"),
    ids=lambda p: p.name,
)
def test_native_logs_are_not_atif(path):
    steps, _, summary, errors = read_trajectory(path, trial_id="t")
    assert steps.height == 0 and summary.height == 0
    assert [e.error_type for e in errors] == ["not_atif"]


def test_claude_code_sidechain_steps_are_kept_flagged_and_not_counted():
    """Subagent steps in the main file (extra.is_sidechain) are rows with is_sidechain True
    and is_main False (their calls too), and not in the main agent's counts."""
    path = ATIF.parent / "constructed" / "claude-code-sidechain" / "agent" / "trajectory.json"
    steps, calls, summary, errors = read_trajectory(path, trial_id="t")
    assert errors == [] and steps.height == 7
    assert steps["is_sidechain"].to_list() == [False, False, True, True, True, False, False]
    assert steps.filter(pl.col("is_sidechain"))["is_main"].to_list() == [False] * 3
    assert calls.filter(pl.col("tool_call_id") == "toolu_side1")["is_main"].to_list() == [False]
    # main agent: steps 2, 6, 7 (3 steps, 2 calls); with the sidechain: 5 steps, 3 calls
    assert summary.select("n_steps", "n_tool_calls", "n_turns").rows() == [(3, 2, 3)]
    side = steps.filter(pl.col("source") == "agent")
    assert side.height == 5 and side["n_tool_calls"].sum() == 3
