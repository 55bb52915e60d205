"""evalkit.launch.harborcli finds Harbor's executable (setting, then $EVALKIT_HARBOR, then
PATH), reads its version, builds the environment Harbor's process gets and asks Harbor for
its resolved config and schema. Checked here with tiny stand-in executables (shell scripts
in tmp_path): the lookup order and its error message, version parsing, PYTHONPATH order and
defaults, and how Harbor's output (leading noise, failures) is read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evalkit.launch import harborcli
from evalkit.launch.harborcli import (
    HARBOR_ENV_VAR,
    HarborNotFound,
    bundled_agents_dir,
    find_harbor,
    harbor_env,
    harbor_version,
    job_schema,
    print_config,
    version_tuple,
)
from tests.launch.executables import sh_script as script


@pytest.fixture(autouse=True)
def _fresh_version_cache() -> None:
    harbor_version.cache_clear()


# -- find_harbor -------------------------------------------------------------------------


def test_an_explicit_setting_wins_over_the_variable_and_path(tmp_path: Path) -> None:
    mine = script(tmp_path / "a" / "harbor", "exit 0")
    other = script(tmp_path / "b" / "harbor", "exit 0")
    on_path = script(tmp_path / "c" / "harbor", "exit 0")
    env = {HARBOR_ENV_VAR: str(other), "PATH": str(on_path.parent)}
    assert find_harbor(mine, env) == str(mine)
    assert find_harbor(None, env) == str(other)
    assert find_harbor(None, {"PATH": str(on_path.parent)}) == str(on_path)


def test_a_relative_setting_is_returned_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path / "bin" / "my-harbor", "exit 0")
    monkeypatch.chdir(tmp_path)
    got = find_harbor("bin/my-harbor", {"PATH": ""})
    assert got == str(tmp_path / "bin" / "my-harbor") and os.path.isabs(got)


def test_a_file_that_is_not_executable_is_not_used(tmp_path: Path) -> None:
    plain = tmp_path / "harbor"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    on_path = script(tmp_path / "bin" / "harbor", "exit 0")
    # the variable names a non-executable file: the PATH one is found instead
    assert find_harbor(None, {HARBOR_ENV_VAR: str(plain), "PATH": str(on_path.parent)}) == str(
        on_path
    )


def test_not_found_says_everywhere_it_looked(tmp_path: Path) -> None:
    env = {HARBOR_ENV_VAR: str(tmp_path / "nope-env"), "PATH": str(tmp_path)}
    with pytest.raises(HarborNotFound) as err:
        find_harbor(tmp_path / "nope-setting", env)
    msg = str(err.value)
    assert f"setting={tmp_path / 'nope-setting'} (not an executable)" in msg
    assert f"${HARBOR_ENV_VAR}={tmp_path / 'nope-env'} (not an executable)" in msg
    assert "'harbor' on PATH (not found)" in msg
    # the three places, in lookup order
    assert msg.index("setting=") < msg.index(f"${HARBOR_ENV_VAR}=") < msg.index("on PATH")
    assert "Python >= 3.12" in msg and f"set ${HARBOR_ENV_VAR}" in msg


def test_an_empty_variable_is_skipped_not_reported(tmp_path: Path) -> None:
    with pytest.raises(HarborNotFound) as err:
        find_harbor(None, {HARBOR_ENV_VAR: "", "PATH": str(tmp_path)})
    assert HARBOR_ENV_VAR + "=" not in str(err.value)


# -- harbor_version / version_tuple ---------------------------------------------------------


def test_version_is_the_last_line_harbor_prints(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", 'echo "some banner"\necho "  0.26.1  "')
    assert harbor_version(str(exe)) == "0.26.1"


@pytest.mark.parametrize(
    "body", ["echo 0.26.0\nexit 1", "exit 0", "echo 0.26.0 >&2"], ids=["fails", "silent", "stderr"]
)
def test_version_is_none_when_harbor_fails_or_prints_nothing(tmp_path: Path, body: str) -> None:
    assert harbor_version(str(script(tmp_path / "harbor", body))) is None


def test_version_of_a_missing_executable_is_none(tmp_path: Path) -> None:
    assert harbor_version(str(tmp_path / "missing")) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.26.0", (0, 26, 0)),
        ("0.26", (0, 26)),
        ("1.10.3", (1, 10, 3)),  # numeric, not text, order: 10 > 9
        ("0.1.43", (0, 1, 43)),
        ("", ()),
        (None, ()),
        ("0..26", (0,)),  # stops at the first part without a digit
        # a pre-release keeps its leading number and ends the tuple (rc1 is not "1")
        ("0.25rc1", (0, 25)),
        ("0.2rc6", (0, 2)),
        ("0.26.0rc1", (0, 26, 0)),
        ("v0.26.1", ()),  # no leading number
    ],
)
def test_version_tuple(text: str | None, expected: tuple[int, ...]) -> None:
    assert version_tuple(text) == expected


def test_a_release_candidate_of_an_older_harbor_is_older() -> None:
    assert version_tuple("0.25rc1") < harborcli.MIN_HARBOR


def test_version_tuples_order_releases_numerically() -> None:
    assert version_tuple("0.9.0") < harborcli.MIN_HARBOR <= version_tuple("0.26.0")
    assert version_tuple("0.26.0") < version_tuple("0.100.0")


# -- bundled_agents_dir / harbor_env ---------------------------------------------------------


def test_bundled_agents_dir_is_the_checkouts_agents_folder() -> None:
    repo = Path(__file__).resolve().parents[2]
    expected = repo / "agents" if (repo / "agents" / "evalkit_scripted").is_dir() else None
    assert bundled_agents_dir() == expected


def test_harbor_env_puts_agent_paths_first_and_keeps_the_callers_pythonpath(
    tmp_path: Path,
) -> None:
    base = {"PYTHONPATH": "/already/there", "HOME": "/h"}
    env = harbor_env([tmp_path / "a", tmp_path / "b" / ".." / "b"], base)
    assert env["PYTHONPATH"] == os.pathsep.join(
        [str(tmp_path / "a"), str(tmp_path / "b"), "/already/there"]
    )
    assert env["HOME"] == "/h" and env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert base == {"PYTHONPATH": "/already/there", "HOME": "/h"}  # the caller's is untouched


def test_harbor_env_drops_duplicate_paths_and_keeps_an_explicit_cost_map_setting(
    tmp_path: Path,
) -> None:
    env = harbor_env(
        [tmp_path, tmp_path], {"PYTHONPATH": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "False"}
    )
    assert env["PYTHONPATH"] == str(tmp_path)
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "False"


def test_harbor_env_without_paths_sets_no_pythonpath() -> None:
    assert "PYTHONPATH" not in harbor_env((), {"X": "1"})


def test_harbor_env_defaults_to_this_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EK_HARBORCLI_PROBE", "seen")
    assert harbor_env()["EK_HARBORCLI_PROBE"] == "seen"


# -- print_config / job_schema ---------------------------------------------------------------

# A stand-in for `harbor run -c FILE --print-config`: a log line, then the config file back
# with one key added, so what Harbor read can be checked.
ECHO_CONFIG = """[ "$1 $2 $4" = "run -c --print-config" ] || { echo "bad args: $*" >&2; exit 9; }
echo "INFO resolving config"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["resolved"]=True; print(json.dumps(d))' "$3"
"""


def test_print_config_reads_the_json_after_harbors_log_lines(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", ECHO_CONFIG)
    cfg = {"job_name": "j", "n_attempts": 2}
    assert print_config(str(exe), cfg, dict(os.environ)) == {**cfg, "resolved": True}


def test_print_config_passes_the_given_environment(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", 'echo "{\\"seen\\": \\"$EK_PROBE\\"}"')
    assert print_config(str(exe), {}, {"EK_PROBE": "from-env", "PATH": "/usr/bin:/bin"}) == {
        "seen": "from-env"
    }


def test_a_rejected_config_raises_with_the_tail_of_harbors_output(tmp_path: Path) -> None:
    lines = "\n".join(f"echo err-{i:02d} >&2" for i in range(1, 21))
    exe = script(tmp_path / "harbor", lines + "\nexit 3")
    with pytest.raises(ValueError, match=r"rejected the job config \(exit 3\)") as err:
        print_config(str(exe), {"x": 1}, dict(os.environ))
    msg = str(err.value)
    # 20 lines written, the last 15 kept: err-06 .. err-20
    assert "err-06" in msg and "err-20" in msg and "err-05" not in msg


def test_output_without_json_is_a_rejection_even_with_exit_code_0(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", "echo 'no config here'")
    with pytest.raises(ValueError, match=r"exit 0\):\nno config here"):
        print_config(str(exe), {}, dict(os.environ))


def test_the_temporary_config_file_is_removed(tmp_path: Path) -> None:
    seen = tmp_path / "seen-path"
    exe = script(tmp_path / "harbor", f'echo "$3" > {seen}\necho "{{}}"')
    print_config(str(exe), {"a": 1}, dict(os.environ))
    used = Path(seen.read_text().strip())
    assert used.name == "config.json" and not used.exists()


def test_job_schema_parses_after_leading_text(tmp_path: Path) -> None:
    exe = script(
        tmp_path / "harbor",
        '[ "$1 $2" = "job schema" ] || exit 9\necho "warning: x"\necho \'{"type": "object"}\'',
    )
    assert job_schema(str(exe)) == {"type": "object"}
    assert job_schema(str(exe), {"PATH": "/usr/bin:/bin"}) == {"type": "object"}


def test_job_schema_failure_raises(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", "echo '{}'\nexit 4")
    with pytest.raises(subprocess.CalledProcessError):
        job_schema(str(exe))


def test_print_config_writes_the_config_as_json(tmp_path: Path) -> None:
    exe = script(tmp_path / "harbor", 'cat "$3"')
    cfg = {"nested": {"list": [1, "two", None]}, "text": 'quote " and \\'}
    assert print_config(str(exe), cfg, dict(os.environ)) == json.loads(json.dumps(cfg))
