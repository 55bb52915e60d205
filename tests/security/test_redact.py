"""evalkit.load.shared.redact: key patterns, word boundaries, env values, Python = Polars."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.shared.redact import (
    REDACTED,
    env_secret_values,
    redact_frame,
    redact_obj,
    redact_text,
)
from tests.security.hostile import SECRETS

NOT_SECRETS = [
    "pip install flask-sqlalchemy-extensions",
    "task-management-system-v2",
    "-webkit-mask-box-image-outset",
    "max_tokens=4096",
    "n_input_tokens",
    "eyJhbGciOi",  # too short for a JWT
    "the bearer of bad news",
]


def test_every_kind_of_key_is_redacted() -> None:
    for name, value in SECRETS.items():
        text = f"prefix {value} suffix\nand in a=({value})"
        out = redact_text(text)
        assert value not in out, name
        assert out.count(REDACTED) == 2, (name, out)


def test_words_that_contain_key_prefixes_are_left_alone() -> None:
    for t in NOT_SECRETS:
        assert redact_text(t) == t


def test_private_key_block() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC+/=\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key:\n{block}\nafter") == f"key:\n{REDACTED}\nafter"
    cut = "-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKC"  # a truncated block goes whole too
    assert redact_text(cut) == REDACTED


def test_env_values_and_extra_values() -> None:
    env = {"OPENAI_API_KEY": "plainvalue-no-pattern-123", "MY_PASSWORD": "hunter2hunter2",
           "HOME": "/root", "FLAG_TOKEN": "true", "PASSED": "value-of-passed-var"}  # fmt: skip
    vals = env_secret_values(env, names=["PASSED"])
    assert set(vals) == {"plainvalue-no-pattern-123", "hunter2hunter2", "value-of-passed-var"}
    assert redact_text("x plainvalue-no-pattern-123 y", vals) == f"x {REDACTED} y"
    df = pl.DataFrame({"t": ["a value-of-passed-var b", None]})
    assert redact_frame(df, extra_values=vals)["t"].to_list() == [f"a {REDACTED} b", None]


def test_redact_obj_env_mappings_and_secret_keys() -> None:
    cfg = {"agents": [{"env": {"ANTHROPIC_API_KEY": "anything"}, "kwargs": {"api_key": "x"}}],
           "note": "uses " + SECRETS["anthropic"], "max_tokens": 10}  # fmt: skip
    out = redact_obj(cfg)
    assert out["agents"][0]["env"]["ANTHROPIC_API_KEY"] == REDACTED
    assert out["agents"][0]["kwargs"]["api_key"] == REDACTED
    assert SECRETS["anthropic"] not in out["note"] and out["max_tokens"] == 10


PIECES = st.sampled_from(
    [
        *SECRETS.values(),
        *NOT_SECRETS,
        " ",
        "\n",
        "=",
        "(",
        "x",
        "sk-",
        "Bearer ",
        "\x1c",
        "é",
        "-----BEGIN PRIVATE KEY-----",
        "ghp_",
        "AKIA",
        "\t",
    ]
)


@settings(max_examples=1000, derandomize=True, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("".join))
def test_polars_redaction_equals_python_redaction(text: str) -> None:
    """Frames (a Polars pre-filter, then Python) and text are redacted identically."""
    got = redact_frame(pl.DataFrame({"t": [text]}))["t"][0]
    assert got == redact_text(text)


def test_values_under_secret_names_in_a_loaded_config_are_hidden_everywhere(
    tmp_path, monkeypatch
) -> None:
    import json
    import shutil

    import evalkit
    from evalkit.load.shared import redact
    from tests.conftest import SKILLSBENCH_JOB

    cfg = {"agents": [{"env": {"MY_SERVICE_API_KEY": "svc-value-12345678", "LOG": "debug-all-x"}}],
           "verifier": {"db_password": 12345678901, "nested": [[{"x_token": "tok-value-abcdefgh"}]]},
           "max_tokens": 100000000, "short_secret": "abc"}  # fmt: skip
    assert redact.config_secret_values(cfg) == {
        "svc-value-12345678", "12345678901", "tok-value-abcdefgh"
    }  # fmt: skip
    deep: object = {"api_key": "deep-secret-value"}
    for _ in range(5000):  # any nesting depth
        deep = [deep]
    assert redact.config_secret_values(deep) == {"deep-secret-value"}

    monkeypatch.setattr(redact, "_CONFIG_SECRETS", set())
    job = tmp_path / "job"
    shutil.copytree(SKILLSBENCH_JOB, job)
    full = json.loads((job / "config.json").read_text())
    full["agents"][0]["env"] = {"MY_SERVICE_API_KEY": "svc-value-12345678"}
    (job / "config.json").write_text(json.dumps(full))
    assert "svc-value-12345678" not in env_secret_values()
    evalkit.load(job, cache=False, progress=False)
    assert "svc-value-12345678" in env_secret_values()
    assert "svc-value-12345678" not in env_secret_values({})  # an explicit environment only
    assert redact_text("echo svc-value-12345678", env_secret_values()) == f"echo {REDACTED}"
