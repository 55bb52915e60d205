"""The fast load paths (issue 10) give exactly what the plain ones gave.

* ``extract_trial`` (rewritten for speed) against the frozen original in
  ``reference_extract.py``: same record, same errors in the same order, and the signature
  ``trial_sig`` computes, on every real fixture trial, a generated tree
  (``benchmarks/gen_harbor.py``) and odd trial folders (broken, empty, NaN, FIFO, folder
  instead of file, symlinks, multi-step, reward files, config.json only, unreadable).
* ``evalkit.load``: cold (cache off / first load), warm (fast path) and incremental loads
  give equal frames.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalkit
from evalkit.load.trials import extract as fast
from evalkit.load.trials.table import trial_sig
from tests.conftest import HARBOR
from tests.load import reference_extract as ref
from tests.load.factory import trial_result, write

ROOT = Path(__file__).resolve().parents[2]


def _gen_harbor():
    spec = importlib.util.spec_from_file_location(
        "gen_harbor", ROOT / "benchmarks" / "gen_harbor.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_harbor"] = mod
    spec.loader.exec_module(mod)
    return mod


def _same(a: object, b: object) -> bool:
    """Equality that treats NaN == NaN (records may carry NaN only through bugs)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _check(trial_dir: str) -> None:
    sig_before = trial_sig(trial_dir)
    want_rec, want_errs = ref.extract_trial(trial_dir, "tid")
    rec, errs, sig = fast.extract_trial(trial_dir, "tid")
    assert len(rec) == len(ref.RAW_FIELDS)
    for name, a, b in zip(ref.RAW_FIELDS, want_rec, rec, strict=True):
        assert _same(a, b), (trial_dir, name, a, b)
    assert errs == want_errs, trial_dir
    assert sig == sig_before == trial_sig(trial_dir), trial_dir


def _trial_dirs(root: Path) -> list[str]:
    return sorted(str(p.parent) for p in root.rglob("result.json") if "__" in p.parent.name)


def test_extract_matches_reference_on_real_fixture_trials() -> None:
    dirs = _trial_dirs(HARBOR)
    assert len(dirs) > 50
    for d in dirs:
        _check(d)


def test_extract_matches_reference_on_a_generated_tree(tmp_path: Path) -> None:
    gen = _gen_harbor()
    gen.generate(tmp_path / "g", trials=120, jobs=2, attempts=3, seed=3, atif=True)
    gen.generate(tmp_path / "h", trials=60, jobs=1, attempts=2, seed=4, max_result_kb=8)
    dirs = _trial_dirs(tmp_path)
    assert len(dirs) == 180
    for d in dirs:
        _check(d)


def _odd_trials(root: Path) -> list[Path]:
    """Trial folders in every shape the extractor has a branch for."""
    out = []

    def trial(name: str, obj: object | None = None, raw: bytes | None = None) -> Path:
        td = root / f"{name}__abcdefg"
        td.mkdir(parents=True)
        if obj is not None:
            write(td / "result.json", obj)
        if raw is not None:
            (td / "result.json").write_bytes(raw)
        out.append(td)
        return td

    base = trial_result("t", "x")
    trial("plain", base)
    trial("empty", raw=b"")
    trial("spaces", raw=b"  \n ")
    trial("broken", raw=b'{"a": ')
    trial("nan", raw=b'{"trial_name": "n", "verifier_result": {"rewards": {"reward": NaN}}}')
    trial("badutf8", raw=b'{"a": "\xff\xfe"}')
    trial("list", raw=b"[1, 2]")
    trial("emptyobj", raw=b"{}")
    trial("number", raw=b"3")
    td = trial("dirresult")
    (td / "result.json").mkdir()
    td = trial("fifo")
    os.mkfifo(td / "result.json")
    td = trial("brokenlink")
    (td / "result.json").symlink_to(td / "nowhere.json")
    td = trial("link")
    write(root / "elsewhere.json", base)
    (td / "result.json").symlink_to(root / "elsewhere.json")
    trial("nothing")  # no result.json at all
    td = trial("configonly")
    write(
        td / "config.json",
        {"trial_name": "c", "task": {"path": "tasks/abc/"}, "agent": {"import_path": "m:A"}},
    )
    td = trial("configbroken", {"trial_name": "cb"})
    (td / "config.json").write_bytes(b"{nope")
    weird = dict(base)
    weird.update(
        id=5,
        trial_name="",
        task_name="",
        source=7,
        task_id={"org": "o", "name": "n", "ref": "r"},
        agent_info={"name": "", "version": "  \n2.0 build\nmore", "model_info": {"name": "m"}},
        verifier_result={"rewards": {"reward": "pass", "speed": 2, "flag": True, "x": 1e308}},
        exception_info={"exception_type": 3, "exception_message": {"k": 1}, "occurred_at": ""},
        agent_result={"n_input_tokens": 5.0, "n_cache_tokens": True, "n_output_tokens": 2**70},
        reward_valid=1,
        schema_version="1.1",
        environment_setup=[],
        agent_setup={"started_at": 5, "finished_at": "2026-05-01T10:00:00"},
    )
    weird["config"] = {"agent": {"model_name": "openai/gpt-x", "name": 3}, "job_id": 9}
    trial("weird", weird)
    git = dict(base, task_id={"git_url": "https://g", "git_commit_id": "c0", "path": "p"})
    git["agent_info"] = {"model_info": {"name": "prov/model", "provider": "p"}}
    trial("git", git)
    multi = {
        "trial_name": "m",
        "task_name": "mt",
        "step_results": [
            {
                "verifier_result": {"rewards": {"reward": 0.5}},
                "agent_result": {"n_input_tokens": 3, "n_cache_tokens": 1, "n_output_tokens": 2},
                "exception_info": {"exception_type": "AgentTimeoutError"},
            },
            {"verifier_result": None, "agent_result": {"n_input_tokens": 4, "cost_usd": 0.1}},
            "garbage",
        ],
    }
    trial("multi", multi)
    td = trial("rewardtxt", dict(base, verifier_result=None))
    (td / "verifier").mkdir()
    (td / "verifier" / "reward.txt").write_text("0.75\n")
    (td / "verifier" / "test-stdout.txt").write_text("ok")
    td = trial("rewardjson", dict(base, verifier_result={"rewards": None}))
    (td / "verifier").mkdir()
    (td / "verifier" / "reward.json").write_text('{"reward": 1, "note": "x"}')
    (td / "verifier" / "reward.txt").write_text("abc")
    (td / "lock.json").write_text("{}")
    td = trial("oldreward", dict(base, verifier_result=None))
    td_cfg = {"environment": {"mounts_json": []}}
    write(td / "result.json", dict(base, verifier_result=None, config=td_cfg))
    (td / "verifier").mkdir()
    (td / "verifier" / "reward.txt").write_text("inf")
    (td / "verifier" / "reward.json").write_text("[1]")
    td = trial("rewardnotnum", dict(base, verifier_result=None))
    (td / "verifier").mkdir()
    (td / "verifier" / "reward.txt").write_text("pass")
    td = trial("evidence", base)
    (td / "agent").mkdir()
    (td / "agent" / "x.trajectory.json").write_text("{}")
    (td / "artifacts").mkdir()
    (td / "artifacts" / "manifest.json").write_text("{}")
    (td / "verifier").mkdir()
    (td / "verifier" / "ctrf.json").write_text("{}")
    td = trial("stepstraj", base)
    (td / "steps" / "s1" / "agent").mkdir(parents=True)
    (td / "steps" / "s1" / "agent" / "trajectory.json").write_text("{}")
    td = trial("agentfile", base)
    (td / "agent").write_text("not a folder")
    td = trial("verifierfile", base)
    (td / "verifier").write_text("not a folder")
    return out


def test_extract_matches_reference_on_odd_trials(tmp_path: Path) -> None:
    for td in _odd_trials(tmp_path / "job"):
        _check(str(td))
    # trailing slash: paths in errors are joined the same way
    _check(str(tmp_path / "job" / "broken__abcdefg") + "/")


def test_extract_matches_reference_when_the_folder_cannot_be_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tds = _odd_trials(tmp_path / "job")
    real = os.listdir

    def listdir(path: str) -> list[str]:
        if os.fspath(path).rstrip("/").endswith("__abcdefg"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    for td in tds:
        _check(str(td))


def test_extract_matches_reference_under_a_small_size_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_MAX_FILE_MB", "0.001")  # ~1 KB: big results are 'too_large'
    for td in _odd_trials(tmp_path / "job"):
        _check(str(td))


def _frames(runs: evalkit.Runs) -> dict[str, pl.DataFrame]:
    return {
        "trials": runs.trials,
        "jobs": runs.jobs.drop("state"),
        "errors": runs.load_errors.sort(pl.all()),
    }


def _equal(a: evalkit.Runs, b: evalkit.Runs) -> None:
    fa, fb = _frames(a), _frames(b)
    for k in fa:
        assert_frame_equal(fa[k], fb[k])


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    gen = _gen_harbor()
    root = tmp_path / "runs"
    gen.generate(root, trials=200, jobs=3, attempts=4, seed=5, atif=True)
    shutil.copytree(HARBOR / "openclaw-dev-jobs" / "2026-05-26__11-41-23", root / "oc")
    odd = root / "odd"
    _odd_trials(odd)
    write(odd / "config.json", {"job_name": "odd"})
    return root


def test_cold_warm_and_incremental_loads_are_equal(tree: Path) -> None:
    opts = [{}, {"run": "job", "outcome_rule": "strict", "naive_tz": "+02:00"}]
    for kw in opts:
        plain = evalkit.load(tree, cache=False, progress=False, **kw)
        first = evalkit.load(tree, progress=False, **kw)
        warm = evalkit.load(tree, progress=False, **kw)
        _equal(plain, first)
        _equal(plain, warm)
    # add trials to a finished job and rewrite one: the next load sees both
    gen = _gen_harbor()
    job = tree / "bench-job-00"
    gen.add_trials(job, 7, seed=9)
    victim = sorted(p for p in job.iterdir() if p.is_dir())[0] / "result.json"
    d = orjson.loads(victim.read_bytes())
    d["verifier_result"] = {"rewards": {"reward": 0.25}}
    victim.write_bytes(orjson.dumps(d))
    os.utime(job)  # a changed job folder (a new trial folder changes it anyway)
    after = evalkit.load(tree, progress=False)
    _equal(evalkit.load(tree, cache=False, progress=False), after)
    assert after.trials.filter(pl.col("trial_dir") == str(victim.parent))["reward"].item() == 0.25
    assert after.trials.height == plain.trials.height + 7


def _attempts_reference(df: pl.DataFrame, label: pl.Expr) -> pl.DataFrame:
    """add_run_and_attempt before issue 10 (sort + window + join back)."""
    from evalkit.load._columns import conform
    from evalkit.load.trials.columns import COLUMNS

    df = df.with_columns(pl.coalesce(pl.col("__label"), label).alias("run"))
    order = df.select(
        pl.int_range(pl.len()).alias("__row"), "run", "task_name", "started_at", "trial_name"
    ).sort(["run", "task_name", "started_at", "trial_name"], nulls_last=True)
    order = order.with_columns(
        (pl.int_range(pl.len()).over(["run", "task_name"]) + 1).cast(pl.Int32).alias("attempt")
    )
    df = df.with_columns(pl.int_range(pl.len()).alias("__row")).join(
        order.select("__row", "attempt"), on="__row", how="left"
    )
    drop = [c for c in df.columns if c.startswith("__") or c.startswith("_")] + ["__row"]
    return conform(df.sort("__row").drop(drop, strict=False), COLUMNS, extra=False)


@pytest.mark.parametrize("seed", range(8))
def test_attempt_numbering_matches_the_original(seed: int) -> None:
    from datetime import UTC, datetime, timedelta

    from evalkit.load.trials.derive import add_run_and_attempt, default_run_label

    rng = __import__("random").Random(seed)
    n = 400
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    df = pl.DataFrame(
        {
            "__label": [rng.choice([None, None, "L1", "L2"]) for _ in range(n)],
            "agent_name": [rng.choice(["a", "b", None]) for _ in range(n)],
            "model_name": [rng.choice(["p/m", "m", None]) for _ in range(n)],
            "task_source": [rng.choice(["ds", None]) for _ in range(n)],
            "__dataset": [rng.choice(["d@1", None]) for _ in range(n)],
            "task_name": [rng.choice(["t1", "t2", "t3", None]) for _ in range(n)],
            "regrade_of": [rng.choice([None, None, None, "src"]) for _ in range(n)],
            "started_at": [
                None if rng.random() < 0.2 else t0 + timedelta(seconds=rng.randint(0, 30))
                for _ in range(n)
            ],
            "trial_name": [f"trial-{rng.randint(0, 10**9):010d}-{i}" for i in range(n)],
        },
        schema_overrides={"started_at": pl.Datetime("us", "UTC")},
    )
    assert_frame_equal(
        add_run_and_attempt(df, default_run_label()),
        _attempts_reference(df, default_run_label()),
    )


def test_remembered_trial_lists_follow_folder_changes(tree: Path) -> None:
    from evalkit.load.shared import cache as cache_mod

    old = 1_700_000_000
    (tree / "odd" / "notes").mkdir()  # not named like a trial: an 'unrecognised_folder'
    for jd in tree.iterdir():
        os.utime(jd, (old, old))
    first = evalkit.load(tree, progress=False)
    job = tree / "bench-job-01"
    assert (cache_mod.job_cache_dir(job) / "discover.json").exists()
    # a job with a sub-folder not named like a trial is never remembered
    assert not (cache_mod.job_cache_dir(tree / "odd") / "discover.json").exists()
    _equal(first, evalkit.load(tree, progress=False))
    # a trial folder removed and one added: the folder's mtime changes, the list is re-read
    victim = sorted(p for p in job.iterdir() if p.is_dir())[3]
    shutil.rmtree(victim)
    _gen_harbor().add_trials(job, 2, seed=11)
    after = evalkit.load(tree, progress=False)
    assert after.trials.height == first.trials.height + 1
    assert str(victim) not in after.trials["trial_dir"].to_list()
    _equal(evalkit.load(tree, cache=False, progress=False), after)
    # a changed job result.json (e.g. a resumed job) re-reads the list as well
    os.utime(job, (old, old))
    evalkit.load(tree, progress=False)
    (job / "result.json").write_bytes((job / "result.json").read_bytes() + b" ")
    _equal(evalkit.load(tree, cache=False, progress=False), evalkit.load(tree, progress=False))


def test_whole_load_results_are_reused_only_for_the_same_jobs_and_options(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalkit.load.api as api
    from evalkit.load.shared import cache as cache_mod

    jobs = [tree / "bench-job-00", tree / "bench-job-01", tree / "bench-job-02"]
    variants: list[tuple[object, dict]] = [
        (jobs, {}),
        (jobs, {"run": "job"}),
        (jobs, {"run": {"bench-job-00": "A"}}),
        (jobs, {"outcome_rule": "strict", "naive_tz": "UTC"}),
        ({"X": jobs[0], "Y": jobs[1:]}, {}),
        (jobs[::-1], {}),
    ]
    plain = [evalkit.load(p, cache=False, progress=False, **kw) for p, kw in variants]
    for (p, kw), want in zip(variants, plain, strict=True):
        _equal(want, evalkit.load(p, progress=False, **kw))
    assert len(list((cache_mod.cache_root() / "v1" / "loads").glob("*.parquet"))) >= 5

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("derived again although a whole-load result is stored")

    monkeypatch.setattr(api, "assemble", boom)
    for (p, kw), want in zip(variants, plain, strict=True):
        _equal(want, evalkit.load(p, progress=False, **kw))
    monkeypatch.undo()
    # a job that changes is not served from the stored result
    gen = _gen_harbor()
    gen.add_trials(jobs[0], 3, seed=12)
    _equal(evalkit.load(jobs, cache=False, progress=False), evalkit.load(jobs, progress=False))


def test_a_fifo_where_a_trajectory_should_be_is_an_error_not_a_hang(tmp_path: Path) -> None:
    from evalkit.load.steps.table import build_trajectories

    td = tmp_path / "job" / "t__abcdefg"
    (td / "agent").mkdir(parents=True)
    os.mkfifo(td / "agent" / "trajectory.json")
    trials = pl.DataFrame({"trial_id": ["t"], "trial_dir": [str(td)]})
    for cache in (False, True):
        tf = build_trajectories(trials, cache=cache, progress=False)
        assert [e.error_type for e in tf.errors] == ["not_a_file"]


def test_blocks_and_thread_pool_give_the_same_frames(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalkit.load.trials.table as table

    want = evalkit.load(tree, cache=False, progress=False)
    monkeypatch.setattr(table, "BLOCK", 7)  # several blocks per job
    _equal(want, evalkit.load(tree, cache=False, progress=False))
    _equal(want, evalkit.load(tree, cache=False, progress=False, workers=3))


def test_cached_rows_from_another_write_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two loads writing one job's cache at once: rows of one write, meta of the other."""
    from evalkit.load.shared import cache as cache_mod
    from tests.load.factory import job

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    exc = {"exception_type": "RateLimitError", "exception_message": "429"}
    trials = [
        trial_result("t", f"t__{i:07d}", rewards={"reward": 1.0}, exc=exc if i % 2 else None)
        for i in range(6)
    ]
    jd = job(tmp_path / "runs", "rj", trials)
    goose = evalkit.load(jd, cache=False, progress=False)
    strict = evalkit.load(jd, cache=False, progress=False, outcome_rule="strict")
    assert goose.trials["outcome"].to_list() != strict.trials["outcome"].to_list()
    evalkit.load(jd, progress=False)  # cache: goose rows + meta
    meta_p = cache_mod.job_cache_dir(jd) / "trials.meta.json"
    goose_meta = meta_p.read_bytes()
    os.utime(jd, (1_700_000_000, 1_700_000_000))  # changed folder: the next load writes rows
    evalkit.load(jd, progress=False, outcome_rule="strict")  # cache: strict rows + meta
    meta_p.write_bytes(goose_meta)  # ... and the goose load's meta lands last
    shutil.rmtree(cache_mod.cache_root() / "v1" / "loads", ignore_errors=True)
    _equal(goose, evalkit.load(jd, progress=False))
    _equal(strict, evalkit.load(jd, progress=False, outcome_rule="strict"))
