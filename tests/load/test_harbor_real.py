"""The Harbor loader on real job folders, with expectations read from the files by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import evalkit
from tests.conftest import HARBOR, OPENCLAW, SKILLSBENCH_JOB

# trial_name -> (reward, outcome, error_kind, exception_type, n_input, n_cache, n_output)
SKILLSBENCH = {
    "3d-scan-calc__F8Fc7fn": (1.0, "pass", "none", None, 273023, 237856, 0),
    "3d-scan-calc__H3b5QLh": (1.0, "pass", "none", None, 178726, 176093, 0),
    "3d-scan-calc__Jvr9vgw": (1.0, "pass", "none", None, 641973, 595474, 0),
    "3d-scan-calc__cfGcT9F": (0.0, "fail", "none", None, 466409, 450006, 0),
    "3d-scan-calc__qLuah6E": (1.0, "pass", "none", None, 433881, 392390, 0),
    "dialogue-parser__EhaimzM": (0.5, "partial", "none", None, 365178, 328650, 0),
    "dialogue-parser__f6fqs7e": (0.833, "partial", "none", None, 668196, 615455, 0),
    "dialogue-parser__gAGMhQB": (0.833, "partial", "none", None, 661685, 614518, 0),
    "dialogue-parser__gPPpE6J": (1.0, "pass", "none", None, 1466826, 1419987, 0),
    "dialogue-parser__yqby9Fc": (0.833, "partial", "none", None, 759388, 711790, 0),
    # AgentTimeoutError with a 0.0 reward -> timeout; with 1.0 -> pass (reward beats exception)
    "earthquake-phase-association__7Xz4D6e": (
        0.0,
        "timeout",
        "agent",
        "AgentTimeoutError",
        3197112,
        3143517,
        0,
    ),
    "earthquake-phase-association__HhYd2Tr": (
        1.0,
        "pass",
        "agent",
        "AgentTimeoutError",
        2652869,
        2591034,
        0,
    ),
    "earthquake-phase-association__LYsiHDp": (0.0, "fail", "none", None, 16875759, 16749905, 0),
    "earthquake-phase-association__TWS4jkZ": (0.0, "fail", "none", None, 1331360, 1301386, 0),
    "earthquake-phase-association__nLdNFAb": (0.0, "fail", "none", None, 4181198, 4113485, 0),
    "pg-essay-to-audiobook__psYV7zM": (None, "error", "unknown", "ValueError", 583715, 563371, 0),
    "spring-boot-jakarta-migration__Q9Nkrj2": (
        None,
        "error",
        "verifier",
        "RewardFileNotFoundError",
        None,
        None,
        None,
    ),
}


@pytest.fixture(scope="module")
def every_job() -> evalkit.Runs:
    return evalkit.load(HARBOR, cache=False, progress=False, running_window_s=0)


def test_every_fixture_job_loads(every_job: evalkit.Runs) -> None:
    assert every_job.jobs.height == 48
    assert every_job.trials.height == 63  # 44 openclaw + 17 skillsbench + 2 gemini-cli
    # the only load error: the one trial folder without result.json, in a stopped job
    errs = every_job.load_errors
    assert errs["error_type"].to_list() == ["missing_result"]
    unfinished = every_job.trials.filter(~pl.col("result_present"))
    assert errs["trial_id"].to_list() == unfinished["trial_id"].to_list()
    assert every_job.trials["trial_id"].n_unique() == 63
    for c in (
        "job_id",
        "job_name",
        "run",
        "trial_id",
        "trial_name",
        "task_name",
        "attempt",
        "agent_name",
        "model_name",
        "reward",
        "outcome",
        "error_kind",
        "exception_type",
        "exception_message",
        "started_at",
        "finished_at",
        "duration_s",
        "n_input_tokens",
        "n_cache_tokens",
        "n_output_tokens",
        "cost_usd",
        "n_steps",
        "evidence_complete",
    ):
        assert c in every_job.trials.columns, c
    assert every_job.trials.schema["started_at"] == pl.Datetime("us", "UTC")
    assert set(every_job.trials["outcome"].unique()) <= {
        "pass",
        "partial",
        "fail",
        "timeout",
        "error",
        "no-reward",
        "incomplete",
    }


def test_skillsbench_multi_attempt_job_exact() -> None:
    runs = evalkit.load(SKILLSBENCH_JOB, cache=False, progress=False)
    t = runs.trials
    assert t.height == 17
    got = {
        r["trial_name"]: (
            r["reward"],
            r["outcome"],
            r["error_kind"],
            r["exception_type"],
            r["n_input_tokens"],
            r["n_cache_tokens"],
            r["n_output_tokens"],
        )
        for r in t.iter_rows(named=True)
    }
    assert got == SKILLSBENCH
    assert t["cost_usd"].null_count() == 17  # cost unknown: null, never 0
    assert set(t["run"]) == {"claude-code__MiniMax-M2.1__tasks-no-skills"}
    assert set(t["model_name"]) == {"minimax/MiniMax-M2.1"}
    # five attempts per complete task group, numbered by start time
    att = t.group_by("task_name").agg(pl.col("attempt").sort()).sort("task_name")
    assert att.filter(pl.col("task_name") == "3d-scan-calc")["attempt"].to_list()[0] == [
        1,
        2,
        3,
        4,
        5,
    ]
    first = t.filter(pl.col("trial_name") == "3d-scan-calc__qLuah6E")
    assert first["attempt"].item() == 1
    # job: naive local (UTC+8) times inferred from the job's own data
    j = runs.jobs.row(0, named=True)
    assert j["started_at"] == datetime(2026, 1, 29, 2, 3, 50, 523316, tzinfo=UTC)
    assert j["naive_tz"].startswith("+08:00")
    assert j["n_trials_declared"] == 425 and j["n_trials_found"] == 17
    assert j["n_attempts"] == 5 and j["n_concurrent"] == 20  # orchestrator block (<= 0.1.45)
    assert j["format"] == "legacy-stats" and j["state"] == "complete"
    # naive exception occurred_at read in the same zone: inside its trial
    vt = t.filter(pl.col("trial_name") == "pg-essay-to-audiobook__psYV7zM").row(0, named=True)
    assert vt["started_at"] <= vt["exception_at"] <= vt["finished_at"]
    assert vt["exception_at"] == datetime(2026, 1, 29, 2, 46, 5, 445466, tzinfo=UTC)


def _trial(runs: evalkit.Runs, job_name: str) -> dict:
    rows = runs.trials.filter(pl.col("job_name") == job_name).to_dicts()
    assert len(rows) == 1, job_name
    return rows[0]


@pytest.mark.parametrize(
    ("job", "task", "reward", "outcome", "kind", "agent", "model"),
    [
        (
            "2026-04-28__21-24-42__autoclaw-feishu-invalid-user",
            "autoclaw-feishu-invalid-user",
            0.5,
            "partial",
            "none",
            "autoclaw-cli",
            "anthropic/claude-haiku-4-5-20251001",
        ),
        (
            "2026-04-28__21-24-42__nanoclaw-py-telegram-ghost-send",
            "nanoclaw-py-telegram-ghost-send",
            1.0,
            "pass",
            "none",
            "nanoclaw-py-daemon",
            "anthropic/claude-haiku-4-5-20251001",
        ),
        (
            "2026-04-28__21-24-42__openclaw-irc-single",
            "openclaw-irc-single",
            0.0,
            "fail",
            "none",
            "openclaw-gateway",
            "anthropic/claude-haiku-4-5-20251001",
        ),
        (
            "2026-05-17__08-08-18__openclaw-irc-single-smoke",
            "openclaw-irc-single",
            None,
            "error",
            "unknown",
            "openclaw-gateway",
            "anthropic/claude-haiku-4-5-20251001",
        ),
        (
            "2026-05-26__02-16-43",
            "openclaw-telegram-media-failure",
            None,
            "error",
            "agent",
            "openclaw-gateway",
            None,
        ),
        (
            "2026-05-26__11-12-36",
            "openclaw-telegram-media-failure",
            None,
            "error",
            "infra",
            "openclaw-gateway",
            None,
        ),
        (
            "2026-05-26__12-25-13",
            "harbor/long-running-refresh-token-cache",
            0.625,
            "partial",
            "none",
            "openclaw-gateway",
            "anthropic/claude-opus-4-6",
        ),
        (
            "2026-05-26__11-41-23",
            "harbor/heartbeat-status-watcher",
            1.0,
            "pass",
            "none",
            "openclaw-gateway",
            "anthropic/claude-opus-4-6",
        ),
        (
            "2026-05-26__01-59-53",
            "hermes-telegram-mirror-drop",
            1.0,
            "pass",
            "none",
            "hermes-gateway",
            None,
        ),
        (
            "2026-05-26__02-35-51",
            "openclaw-telegram-media-failure",
            0.93,
            "partial",
            "none",
            "openclaw-gateway",
            None,
        ),
        (
            "2026-05-26__10-40-59",
            "qwenpaw-telegram-chunk-partial-delivery",
            0.0,
            "fail",
            "none",
            "qwenpaw-daemon",
            "anthropic/claude-opus-4-6",
        ),
        (
            "2026-05-15__05-26-37",
            "hermes-telegram-clarify-mis-route",
            0.0,
            "fail",
            "none",
            "hermes-gateway",
            None,
        ),
    ],
)
def test_openclaw_jobs_exact(
    every_job: evalkit.Runs, job: str, task: str, reward, outcome: str, kind: str, agent: str, model
) -> None:
    r = _trial(every_job, job)
    assert (
        r["task_name"],
        r["reward"],
        r["outcome"],
        r["error_kind"],
        r["agent_name"],
        r["model_name"],
    ) == (task, reward, outcome, kind, agent, model)


def test_multi_key_rewards_kept_whole(every_job: evalkit.Runs) -> None:
    r = _trial(every_job, "2026-04-28__21-24-42__autoclaw-feishu-invalid-user")
    assert {x["name"]: x["value"] for x in r["rewards"]} == {
        "reward": 0.5,
        "faithful_communication": 0.0,
        "format_adherence": 1.0,
    }
    assert r["reward_source"] == "result"
    # harbor < 0.7 read reward.txt first: result.json says 0.625 although reward.json has 11 keys
    r = _trial(every_job, "2026-05-26__12-25-13")
    assert [x["name"] for x in r["rewards"]] == ["reward"]


def test_tokens_exact_and_hermes_zero_tokens(every_job: evalkit.Runs) -> None:
    r = _trial(every_job, "2026-05-26__01-59-53")
    assert (r["n_input_tokens"], r["n_cache_tokens"], r["n_output_tokens"], r["cost_usd"]) == (
        0,
        None,
        0,
        None,
    )
    assert r["has_trajectory"] is True
    assert r["run"] == "hermes-gateway__no-model__adhoc"
    r = _trial(every_job, "gemini-cli-gemini3flash-noskills-citation-check-a3a6a4")
    assert (r["n_input_tokens"], r["n_cache_tokens"], r["n_output_tokens"]) == (
        290428,
        195455,
        11809,
    )


def test_trial_without_result_is_incomplete_and_job_without_result_is_a_job(
    every_job: evalkit.Runs,
) -> None:
    r = _trial(every_job, "2026-05-15__02-40-18")
    assert r["outcome"] == "incomplete" and r["reward"] is None
    # the verifier's reward.json is kept as evidence, not as a final reward
    assert r["reward_source"] == "reward.json" and r["rewards"][0] == {
        "name": "reward",
        "value": 0.0,
    }
    j = every_job.jobs.filter(pl.col("job_name") == "2026-05-15__02-40-18").row(0, named=True)
    assert j["state"] == "unknown" and j["n_trials_found"] == 1 and j["format"] == "missing"


def test_interrupted_job_with_counters_format(every_job: evalkit.Runs) -> None:
    j = every_job.jobs.filter(pl.col("job_name") == "2026-05-26__15-28-52").row(0, named=True)
    assert j["state"] == "interrupted"
    assert j["format"] == "counters" and j["n_trials_declared"] == 1 and j["n_trials_found"] == 0
    assert j["finished_at"] is None and j["updated_at"] is not None
    assert j["harbor_version"] == "0.1.45"  # as recorded (stale editable install; documented)


def test_task_name_from_result_not_truncated_folder(every_job: evalkit.Runs) -> None:
    r = _trial(every_job, "2026-05-26__02-40-34")
    assert r["trial_name"] == "openclaw-telegram-link-fetch-sil__SywhPFU"
    assert r["task_name"] == "openclaw-telegram-link-fetch-silent-failure"


def test_openclaw_runs_group_jobs_and_number_attempts(every_job: evalkit.Runs) -> None:
    hermes = every_job.trials.filter(
        (pl.col("run") == "hermes-gateway__no-model__adhoc")
        & (pl.col("task_name") == "hermes-telegram-mirror-drop")
    ).sort("started_at", nulls_last=True)
    assert hermes.height >= 8
    # numbered by start time; the incomplete trial (no start time) comes last
    assert hermes["attempt"].to_list() == list(range(1, hermes.height + 1))
    assert hermes["started_at"][-1] is None and hermes["outcome"][-1] == "incomplete"


def test_every_trial_folder_is_a_row() -> None:
    runs = evalkit.load(OPENCLAW, cache=False, progress=False)
    n_dirs = sum(
        1 for job in OPENCLAW.iterdir() if job.is_dir() for t in job.iterdir() if t.is_dir()
    )
    assert runs.trials.height == n_dirs == 44
