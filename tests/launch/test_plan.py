"""evalkit.launch.plan prepares a launch without running it: every problem collected, the
Harbor config, the frozen manifest (completed by Harbor's resolved view), the action
(start / resume / complete) and the exact command, and what ``--dry-run`` prints.

tests/launch/test_runner.py runs whole launches against the fake Harbor; this module checks
plan's own pieces: scrubbing and where secrets sit, the command line, the secrets of a
launch, PYTHONPATH for agents, the task section for registry and local tasks, the manifest
built from a resolved view (stand-in Harbor scripts), Harbor rejecting the config, the
job location for bad names, and the action read from hand-built job folders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalkit.launch import harborcli
from evalkit.launch import manifest as man
from evalkit.launch.plan import (
    _holding_secrets,
    _pythonpath,
    _task_section,
    command_line,
    launch_secrets,
    prepare,
    scrub,
)
from evalkit.launch.spec import SCRIPTED_AGENT, RunSpec, resolve_tasks
from tests.launch.executables import executable as script

SECRET = "s3cret-value-0123456789"
KEY = "sk-ant-api03-" + "Q" * 40  # key-shaped: redacted without being named


@pytest.fixture(autouse=True)
def _fresh_version_cache() -> None:
    harborcli.harbor_version.cache_clear()


@pytest.fixture
def harbor(tmp_path: Path) -> Path:
    """A Harbor that only answers --version (enough for resolve=False plans)."""
    return script(tmp_path / "bin" / "harbor", "#!/bin/sh\necho 0.26.0\n")


def resolving_harbor(tmp_path: Path, extra: dict, calls: Path | None = None) -> Path:
    """A Harbor whose --print-config returns the config it was given merged with
    ``extra`` (dicts merged one level deep, the agent entry too)."""
    log = f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')" if calls else ""
    return script(
        tmp_path / "bin" / "harbor",
        f"""#!{sys.executable}
import json, sys
{log}
if sys.argv[1:] == ["--version"]:
    print("0.26.0"); sys.exit(0)
if "--print-config" not in sys.argv:
    sys.exit(5)
cfg = json.load(open(sys.argv[sys.argv.index("-c") + 1]))
extra = json.loads({json.dumps(json.dumps(extra))})
for k, v in extra.items():
    if k == "agents":
        cfg[k] = [{{**cfg[k][0], **v[0]}}]
    elif isinstance(v, dict) and isinstance(cfg.get(k), dict):
        cfg[k] = {{**cfg[k], **v}}
    else:
        cfg[k] = v
print("INFO: resolved")
print(json.dumps(cfg))
""",
    )


# -- scrub / _holding_secrets / command_line ---------------------------------------------------


def test_scrub_replaces_secrets_in_every_string_and_keeps_the_rest() -> None:
    obj = {"a": [f"x {SECRET} y", 3, None, {"b": SECRET}], "k": True, "key": f"use {KEY} here"}
    assert scrub(obj, (SECRET,)) == {
        "a": ["x [REDACTED] y", 3, None, {"b": "[REDACTED]"}],
        "k": True,
        "key": "use [REDACTED] here",
    }
    assert obj["a"][0] == f"x {SECRET} y"  # a copy: the original is untouched


def test_holding_secrets_names_the_dotted_path_of_each_string_holding_one() -> None:
    obj = {"a": {"b": ["ok", f"has {SECRET}"]}, "c": SECRET, "d": 1, "e": ["fine"]}
    assert _holding_secrets(obj, (SECRET,)) == ["a.b[1]", "c"]
    assert _holding_secrets(obj, (SECRET,), "agent_kwargs") == [
        "agent_kwargs.a.b[1]",
        "agent_kwargs.c",
    ]
    assert _holding_secrets(obj, ()) == []


def test_command_line_is_shell_quoted_with_pythonpath_in_front() -> None:
    cmd = ["/opt/harbor", "run", "-c", "/runs/my job/c.json", "-y"]
    assert command_line(cmd, []) == "/opt/harbor run -c '/runs/my job/c.json' -y"
    assert command_line(cmd, [Path("/a"), Path("/b c")]) == (
        "PYTHONPATH='/a:/b c' /opt/harbor run -c '/runs/my job/c.json' -y"
    )


# -- launch_secrets --------------------------------------------------------------------------


def test_launch_secrets_are_passed_provider_and_secret_looking_values() -> None:
    environ = {
        "EK_PASSED": "passed-value-1",  # ordinary name, passed to the run
        "GEMINI_API_KEY": "gemini-value-22",  # a provider's key
        "EK_SOME_TOKEN": "token-value-333",  # secret-looking name
        "HOME": "/home/a-long-home-dir",  # neither
        "EK_NOT_PASSED": "not-passed-value",
        "OPENAI_API_KEY": "short",  # under 8 characters: hides nothing
    }
    spec = RunSpec(agent="oracle", dataset="d@1", pass_env=["EK_PASSED"])
    # longest first: 15, 15, 14 characters
    got = launch_secrets(spec, environ)
    assert sorted(got) == ["gemini-value-22", "passed-value-1", "token-value-333"]
    assert [len(v) for v in got] == [15, 15, 14]


def test_launch_secrets_default_to_this_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EK_PASSED_PROBE", "probe-value-12345")
    spec = RunSpec(agent="oracle", dataset="d@1", pass_env=["EK_PASSED_PROBE"])
    assert "probe-value-12345" in launch_secrets(spec)


# -- _pythonpath -----------------------------------------------------------------------------


def test_agent_paths_are_resolved_and_the_bundled_agents_added_for_the_scripted_agent(
    tmp_path: Path,
) -> None:
    bundled = harborcli.bundled_agents_dir()
    if bundled is None:
        pytest.skip("not a source checkout: no agents/evalkit_scripted")
    spec = RunSpec(
        agent_import_path=SCRIPTED_AGENT, dataset="d@1", agent_pythonpath=[tmp_path / "x" / ".."]
    )
    assert _pythonpath(spec) == [tmp_path.resolve(), bundled]
    again = RunSpec(agent_import_path=SCRIPTED_AGENT, dataset="d@1", agent_pythonpath=[bundled])
    assert _pythonpath(again) == [bundled]  # not twice


def test_other_agents_get_only_their_own_paths(tmp_path: Path) -> None:
    spec = RunSpec(
        agent_import_path="mypkg.agent:Agent", dataset="d@1", agent_pythonpath=[tmp_path]
    )
    assert _pythonpath(spec) == [tmp_path.resolve()]
    assert _pythonpath(RunSpec(agent="oracle", dataset="d@1")) == []


# -- _task_section ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tasks", "exclude", "names"),
    [
        (["b", "a"], [], ["a", "b"]),  # explicit names: known, sorted
        (["a*", "b"], [], None),  # a pattern: Harbor decides
        (["b", "a"], ["a"], None),  # an exclusion: Harbor decides
        ([], [], None),  # the whole dataset
    ],
)
def test_registry_tasks_are_named_only_when_given_explicitly(
    tasks: list[str], exclude: list[str], names: list[str] | None
) -> None:
    spec = RunSpec(agent="oracle", dataset="tb@2.0", tasks=tasks, exclude_tasks=exclude)
    section, locations = _task_section(spec, {})
    assert section == {
        "source": "registry",
        "dataset": "tb@2.0",
        "names": names,
        "include": tasks,
        "exclude": exclude,
    }
    assert locations == []


def test_local_tasks_carry_a_digest_of_each_task_folder(dataset: Path) -> None:
    spec = RunSpec(agent="oracle", paths=[dataset], tasks=["*a*"], exclude_tasks=["beta"])
    per_path, _ = resolve_tasks(spec)
    section, locations = _task_section(spec, per_path)
    # *a* matches alpha, beta, gamma-x; beta excluded
    assert section["names"] == ["alpha", "gamma-x"] and list(section["digests"]) == section["names"]
    assert section["include"] == ["*a*"] and section["exclude"] == ["beta"]
    assert locations == [str(dataset)]
    before = section["digests"]
    (dataset / "alpha" / "instruction.md").write_text("Do alpha differently.\n")
    after = _task_section(spec, per_path)[0]["digests"]
    assert after["alpha"] != before["alpha"] and after["gamma-x"] == before["gamma-x"]


def test_a_single_task_folder_is_digested_itself(dataset: Path) -> None:
    spec = RunSpec(agent="oracle", paths=[dataset / "beta", dataset / "alpha"])
    section, locations = _task_section(spec, resolve_tasks(spec)[0])
    assert section["names"] == ["alpha", "beta"]
    assert locations == [str(dataset / "beta"), str(dataset / "alpha")]
    whole = RunSpec(agent="oracle", paths=[dataset], tasks=["beta"])
    assert (
        _task_section(whole, resolve_tasks(whole)[0])[0]["digests"]["beta"]
        == (section["digests"]["beta"])
    )


# -- prepare: manifest, location, resolved view --------------------------------------------


def test_without_harbors_view_the_manifest_holds_the_settings_as_asked(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    spec = RunSpec(
        agent="oracle", paths=[dataset], attempts=3, env="modal", runs_root=tmp_path / "r"
    )
    plan = prepare(spec, harbor=harbor, environ={}, resolve=False)
    m = plan.manifest
    assert plan.problems == [] and plan.resolved_config is None
    assert m["environment"] == {"type": "modal"}
    assert m["retry"] == {"max_retries": 0, "resolved": False}
    assert m["harbor_settings"] == {} and "resolved" not in m["agent"]
    assert m["n_trials"] == 9  # 3 tasks x 3 attempts
    assert m["versions"]["harbor"] == "0.26.0"
    assert m["location"] == {
        "runs_root": str(plan.job_dir.parent),
        "job_dir": str(plan.job_dir),
        "task_paths": [str(dataset)],
    }
    assert plan.command == [
        str(harbor),
        "run",
        "-c",
        str(plan.job_dir / "evalkit-harbor-config.json"),
        "-y",
    ]
    assert not (tmp_path / "r").exists()


def test_harbors_resolved_view_completes_the_manifest(dataset: Path, tmp_path: Path) -> None:
    extra = {
        "environment": {"force_build": False, "mounts": ["/host:/c"]},
        "agents": [{"model_name": None, "kwargs": {"seed": 1}, "env": {"K": "v"}}],
        "retry": {"exclude_exceptions": ["B", "A"], "wait_multiplier": 1.0},
        "debug": False,
        "verifier": {"disable": False, "note": f"echoed {SECRET}"},
    }
    exe = resolving_harbor(tmp_path, extra)
    spec = RunSpec(agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path / "r")
    plan = prepare(spec, harbor=exe, environ={"EK_ECHO_TOKEN": SECRET})
    m = plan.manifest
    assert plan.problems == [] and plan.resolved_config is not None
    assert m["environment"] == {"type": "modal", "force_build": False}  # mounts left out
    assert m["agent"]["resolved"] == {"name": "oracle", "model_name": None}  # no kwargs, env
    assert m["retry"] == {
        "max_retries": 0,
        "exclude_exceptions": ["A", "B"],
        "wait_multiplier": 1.0,
    }
    # everything Harbor resolved except what the manifest holds elsewhere
    assert m["harbor_settings"] == {
        "quiet": True,
        "debug": False,
        "verifier": {"disable": False, "note": "echoed [REDACTED]"},
    }
    assert plan.resolved_config["verifier"]["note"] == "echoed [REDACTED]"
    assert "# Harbor job config (as Harbor resolved it)" in plan.render()


def test_a_config_harbor_rejects_is_a_harbor_problem_without_the_secret(
    dataset: Path, tmp_path: Path
) -> None:
    exe = script(
        tmp_path / "bin" / "harbor",
        '#!/bin/sh\n[ "$1" = "--version" ] && { echo 0.26.0; exit 0; }\n'
        f'echo "ValidationError: agents.0 bad (env had {SECRET})" >&2\nexit 2\n',
    )
    spec = RunSpec(agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path / "r")
    plan = prepare(spec, harbor=exe, environ={"EK_ECHO_TOKEN": SECRET})
    assert [p.kind for p in plan.problems] == ["harbor"]
    msg = plan.problems[0].message
    assert "rejected the job config (exit 2)" in msg and "[REDACTED]" in msg and SECRET not in msg
    assert plan.resolved_config is None
    assert plan.manifest["retry"]["resolved"] is False


def test_harbor_is_not_asked_to_resolve_a_spec_with_problems(dataset: Path, tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    exe = resolving_harbor(tmp_path, {}, calls)
    bad = RunSpec(agent="oracle", paths=[dataset], tasks=["zeta"], env="modal", runs_root=tmp_path)
    plan = prepare(bad, harbor=exe, environ={})
    assert [p.kind for p in plan.problems] == ["tasks"] and plan.resolved_config is None
    assert "--print-config" not in calls.read_text()
    good = RunSpec(agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path)
    assert prepare(good, harbor=exe, environ={}, resolve=False).resolved_config is None
    assert "--print-config" not in calls.read_text()
    assert prepare(good, harbor=exe, environ={}).resolved_config is not None
    assert "--print-config" in calls.read_text()


def test_the_default_job_name_follows_the_settings(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    def name(**kw: object) -> str:
        spec = RunSpec(
            **{"agent": "oracle", "paths": [dataset], "env": "modal", "runs_root": tmp_path, **kw}
        )  # type: ignore[arg-type]
        return prepare(spec, harbor=harbor, environ={}, resolve=False).job_name

    first = name()
    assert first == name() and first.startswith("oracle__nomodel__")
    assert name(concurrency=8) != first and name(attempts=2) != first
    assert name(job_name="mine") == "mine"


def test_a_bad_job_name_is_one_problem_and_points_nowhere_real(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    spec = RunSpec(
        agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path / "r", job_name="../x"
    )
    plan = prepare(spec, harbor=harbor, environ={}, resolve=False)
    assert [p.kind for p in plan.problems] == ["spec"]
    assert "invalid job name '../x'" in plan.problems[0].message
    assert plan.job_dir == (tmp_path / "r").absolute() / "invalid-job-name"


def test_credentials_in_agent_settings_are_manifest_problems(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    spec = RunSpec(
        agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path,
        agent_kwargs={"opts": {"api_key": "x"}, "url": f"https://u:{SECRET}@h", "ok": 1},
    )  # fmt: skip
    plan = prepare(spec, harbor=harbor, environ={"EK_ECHO_TOKEN": SECRET}, resolve=False)
    assert [(p.kind, p.message.split(":")[0]) for p in plan.problems] == [
        ("manifest", "credential-like key agent_kwargs.opts.api_key"),
        ("manifest", "agent_kwargs.url holds the value of a secret environment variable"),
    ]
    assert SECRET not in "\n".join(map(str, plan.problems))


# -- render ----------------------------------------------------------------------------------


def test_render_puts_the_problems_first_and_the_notes_last(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    spec = RunSpec(
        agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path,
        agent_kwargs={"note": KEY},
    )  # fmt: skip
    plan = prepare(spec, harbor=harbor, environ={}, resolve=False)
    lines = plan.render().splitlines()
    n = len(plan.problems)
    assert n >= 1 and lines[0] == f"# {n} PROBLEM(S): the launch would be refused"
    assert lines[1 : 1 + n] == [f"# PROBLEM: {p}" for p in plan.problems]
    assert lines[1 + n] == "# Harbor job config (Harbor not run: evalkit's config)"
    assert (
        lines[-1] == "# note: environment 'modal': passed through to Harbor (its own checks apply)"
    )
    assert lines[-3:-1] == ["# command:", command_line(plan.command, plan.pythonpath)]
    assert "# action: start" in lines
    assert KEY not in plan.render() and '"note": "[REDACTED]"' in plan.render()


def test_render_of_a_clean_plan_starts_with_the_config(
    dataset: Path, tmp_path: Path, harbor: Path
) -> None:
    spec = RunSpec(agent="oracle", paths=[dataset], env="modal", runs_root=tmp_path)
    text = prepare(spec, harbor=harbor, environ={}, resolve=False).render()
    assert text.startswith("# Harbor job config") and "PROBLEM" not in text


# -- the action, from hand-built job folders -----------------------------------------------


def _registry_plan(tmp_path: Path, harbor: Path, tasks: list[str]):
    spec = RunSpec(
        agent="oracle",
        dataset="tb@2.0",
        tasks=tasks,
        env="modal",
        runs_root=tmp_path / "r",
        job_name="j",
    )
    return prepare(spec, harbor=harbor, environ={}, resolve=False)


def _started(job: Path, n_total: int | None, finished_at: str | None, trials: list[float]) -> None:
    """Harbor's files for a job that started: config.json, result.json, trial results."""
    (job / "config.json").write_text("{}")
    (job / "result.json").write_text(
        json.dumps({"n_total_trials": n_total, "finished_at": finished_at})
    )
    for i, reward in enumerate(trials):
        (job / f"t{i}__abc").mkdir()
        (job / f"t{i}__abc" / "result.json").write_text(
            json.dumps({"task_name": f"t{i}", "verifier_result": {"rewards": {"reward": reward}}})
        )


def test_an_empty_job_folder_is_started(tmp_path: Path, harbor: Path) -> None:
    (tmp_path / "r" / "j").mkdir(parents=True)
    plan = _registry_plan(tmp_path, harbor, ["a", "b"])
    assert plan.action == "start" and plan.problems == []


def test_a_started_job_without_a_manifest_is_refused(tmp_path: Path, harbor: Path) -> None:
    job = tmp_path / "r" / "j"
    job.mkdir(parents=True)
    (job / "config.json").write_text("{}")  # no trial folder yet: still another job's
    plan = _registry_plan(tmp_path, harbor, ["a", "b"])
    assert [p.kind for p in plan.problems] == ["manifest"]
    assert plan.problems[0].message == (
        f"{plan.job_dir} already holds a job without an evalkit manifest; choose another job name"
    )


@pytest.mark.parametrize(
    ("tasks", "n_total", "finished_at", "rewards", "action"),
    [
        (["a", "b"], 2, "2026-01-01T00:01:00", [1.0, 0.0], "complete"),
        (["a", "b"], 2, None, [1.0, 0.0], "resume"),  # every result, but Harbor did not finish
        (["a", "b"], 2, "2026-01-01T00:01:00", [1.0], "resume"),  # 1 of 2 trials
        # a pattern: the manifest cannot count trials, Harbor's declared total does
        (["a*"], 2, "2026-01-01T00:01:00", [1.0, 0.0], "complete"),
        (["a*"], 3, "2026-01-01T00:01:00", [1.0, 0.0], "resume"),
        (["a*"], None, "2026-01-01T00:01:00", [1.0, 0.0], "resume"),  # no total known
    ],
)
def test_a_started_job_is_resumed_until_every_trial_has_a_result(
    tmp_path: Path,
    harbor: Path,
    tasks: list[str],
    n_total: int | None,
    finished_at: str | None,
    rewards: list[float],
    action: str,
) -> None:
    first = _registry_plan(tmp_path, harbor, tasks)
    man.write_manifest(first.job_dir, first.manifest)
    _started(first.job_dir, n_total, finished_at, rewards)
    plan = _registry_plan(tmp_path, harbor, tasks)
    assert plan.problems == [] and plan.action == action
    # complete or not, the command shown is Harbor's resume (nothing runs when complete)
    assert plan.command == [str(harbor), "job", "resume", "-p", str(plan.job_dir)]
