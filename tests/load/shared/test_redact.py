"""evalkit.load.shared.redact: the functions around the key patterns.

``redact_series`` is ``redact_text`` over a String Series (a Polars pre-filter, then Python
for the hits only: the result must be exactly the per-value one), ``redact_frame`` applies it
to the String columns asked for, ``config_secret_values`` / ``learn_config_secrets`` collect
the values a config holds under secret-looking names, ``env_secret_values`` the values of
secret-looking environment variables (longest first), ``is_secret_key`` decides the names,
and ``redact_obj`` deep-copies JSON-like data with secrets replaced (env mappings wholly).
The key patterns themselves and the single-value Polars = Python property are in
``tests/security/test_redact.py``.
"""

from __future__ import annotations

import copy

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.shared import redact
from evalkit.load.shared.redact import (
    REDACTED,
    SECRET_ENV_NAMES,
    config_secret_values,
    env_secret_values,
    is_secret_key,
    learn_config_secrets,
    redact_frame,
    redact_obj,
    redact_series,
    redact_text,
)
from tests.security.hostile import SECRETS

ANT = SECRETS["anthropic"]
AWS = SECRETS["aws"]

# -- redact_series -----------------------------------------------------------------------

PIECES = st.sampled_from(
    [*SECRETS.values(), " ", "\n", "x", "=", "sk-", "AKIA", "Bearer ", "literal-value", "é"]
)
VALUES = st.one_of(st.none(), st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=6).map("".join))  # fmt: skip
EXTRAS = st.lists(
    st.sampled_from(["literal-value", "short", "", "al-val", "ue-lit", ANT[:10]]), max_size=3
).map(tuple)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(VALUES, max_size=8), EXTRAS)
def test_redact_series_equals_redact_text_on_each_value(
    values: list[str | None], extra: tuple[str, ...]
) -> None:
    got = redact_series(pl.Series("s", values, dtype=pl.String), extra).to_list()
    assert got == [None if v is None else redact_text(v, extra) for v in values]


def test_redact_series_without_any_hit_returns_the_values_unchanged() -> None:
    s = pl.Series("s", ["plain", None, "text"], dtype=pl.String)
    assert redact_series(s).to_list() == ["plain", None, "text"]


def test_redact_series_replaces_only_the_values_that_hold_a_key() -> None:
    s = pl.Series("s", ["ok", f"k={ANT}", None, f"{AWS} and {ANT}"])
    # one key in the 2nd value; two in the 4th
    assert redact_series(s).to_list() == ["ok", f"k={REDACTED}", None, f"{REDACTED} and {REDACTED}"]


def test_extra_values_shorter_than_six_characters_are_not_hidden() -> None:
    s = pl.Series("s", ["abcde abcdef"])
    # 'abcde' (5) is ignored, 'abcdef' (6) is replaced
    assert redact_series(s, ("abcde", "abcdef")).to_list() == [f"abcde {REDACTED}"]


# -- redact_frame ------------------------------------------------------------------------


def test_redact_frame_defaults_to_every_string_column_and_leaves_other_dtypes() -> None:
    df = pl.DataFrame(
        {"a": [f"x {ANT}"], "b": [f"{AWS}"], "n": [3], "l": [[ANT]]},
        schema={"a": pl.String, "b": pl.String, "n": pl.Int64, "l": pl.List(pl.String)},
    )
    out = redact_frame(df)
    assert out.row(0) == (f"x {REDACTED}", REDACTED, 3, [ANT])  # lists are not String columns
    assert out.schema == df.schema


def test_redact_frame_only_touches_the_named_string_columns() -> None:
    df = pl.DataFrame({"a": [ANT], "b": [ANT], "n": [1]})
    out = redact_frame(df, ["a", "n", "missing"])  # 'n' is no String, 'missing' is no column
    assert out.row(0) == (REDACTED, ANT, 1)
    assert redact_frame(df, []).equals(df)


def test_redact_frame_of_no_rows_is_the_same_frame() -> None:
    df = pl.DataFrame({"a": []}, schema={"a": pl.String})
    assert redact_frame(df) is df


# -- names and collected values ------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("OPENAI_API_KEY", True),
        ("x-api-key", True),
        ("GITHUB_TOKEN", True),
        ("db_Password", True),
        ("Authorization", True),
        ("session_cookie", True),
        ("max_tokens", False),
        ("N_OUTPUT_TOKENS", False),
        ("prompt_tokens", False),  # any *_tokens count is no secret
        ("HOME", False),
        ("model_name", False),
    ],
)
def test_is_secret_key_matches_secret_parts_but_not_token_counts(key: str, expected: bool) -> None:
    assert is_secret_key(key) is expected


def test_config_secret_values_takes_long_scalars_under_secret_names_only() -> None:
    cfg = {
        "agent": {
            "env": {"SERVICE_TOKEN": "tok-12345678", "LOG_LEVEL": "verbose-logging"},
            "kwargs": {"auth": True, "password": "short", "api_key": REDACTED},
        },
        "DATABRICKS_HOST": "https://dbc-1234.cloud",  # a secret env name without a key part
        "secret_number": 1234567.5,
    }
    # True is no secret, 'short' has 5 < 8 characters, [REDACTED] is already hidden
    assert config_secret_values(cfg) == {"tok-12345678", "https://dbc-1234.cloud", "1234567.5"}


def test_config_secret_values_of_scalars_and_empty_objects_is_empty() -> None:
    for obj in (None, "sk-whatever-value", 12345678, [], {}):
        assert config_secret_values(obj) == set()


def test_learned_config_secrets_join_this_process_environment_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redact, "_CONFIG_SECRETS", set())
    learn_config_secrets({"env": {"MY_API_KEY": "learned-value-1"}})
    learn_config_secrets({"x_secret": "learned-value-22"})
    learned = redact._CONFIG_SECRETS
    assert learned == {"learned-value-1", "learned-value-22"}
    monkeypatch.setattr(redact.os, "environ", {"OTHER_TOKEN": "environment-value-333"})
    # longest first: 21, 16, 15 characters
    assert env_secret_values() == ("environment-value-333", "learned-value-22", "learned-value-1")


def test_env_secret_values_are_longest_first_and_skip_short_and_non_secret_names() -> None:
    env = {
        "A_TOKEN": "12345678",  # 8 characters: the shortest kept
        "B_SECRET": "1234567",  # 7: too short
        "ANTHROPIC_API_KEY": "a-much-longer-value",
        "MAX_TOKENS": "100000000",  # a count, not a secret
        "PATH": "/usr/local/bin:/usr/bin",
        SECRET_ENV_NAMES[0]: "https://adb-1.azuredatabricks.net",
        "RUN_VAR": "passed-to-the-run",
    }
    got = env_secret_values(env, names=["RUN_VAR"])
    assert got == (
        "https://adb-1.azuredatabricks.net",
        "a-much-longer-value",
        "passed-to-the-run",
        "12345678",
    )
    assert "passed-to-the-run" not in env_secret_values(env)  # only when named


def test_an_explicit_environment_leaves_out_the_learned_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redact, "_CONFIG_SECRETS", {"learned-from-config"})
    assert env_secret_values({}) == ()
    assert env_secret_values({"X_TOKEN": "value-of-x-token"}) == ("value-of-x-token",)


# -- redact_obj --------------------------------------------------------------------------


def test_every_value_of_an_env_mapping_is_hidden_and_the_names_kept() -> None:
    cfg = {
        "environment": {
            "ENV": {"LOG": "debug", "PORT": 8080, "EMPTY": "", "UNSET": None},
            "environment_variables": {"A": "x"},
            "env_vars": {"B": "y"},
        }
    }
    out = redact_obj(cfg)
    # None and "" say nothing: kept; every other value goes, whatever its name or type
    assert out["environment"]["ENV"] == {"LOG": REDACTED, "PORT": REDACTED, "EMPTY": "", "UNSET": None}  # fmt: skip
    assert out["environment"]["environment_variables"] == {"A": REDACTED}
    assert out["environment"]["env_vars"] == {"B": REDACTED}


def test_secret_keys_hide_scalars_but_not_booleans_and_other_text_is_pattern_redacted() -> None:
    cfg = {
        "api_key": 12345,
        "use_auth": False,
        "token": None,
        "notes": [f"key {ANT}", 3, {"deep": f"{AWS}!"}],
        "max_tokens": 4096,
        "name": "plain",
    }
    out = redact_obj(cfg, extra_values=("plain",))  # 5 characters: not a value to hide
    assert out == {
        "api_key": REDACTED,
        "use_auth": False,
        "token": None,  # None is not a scalar value to hide
        "notes": [f"key {REDACTED}", 3, {"deep": f"{REDACTED}!"}],
        "max_tokens": 4096,
        "name": "plain",
    }


def test_redact_obj_uses_extra_values_and_never_changes_its_input() -> None:
    cfg = {"cmd": "curl -H my-private-value-1 host", "list": ["my-private-value-1"]}
    before = copy.deepcopy(cfg)
    out = redact_obj(cfg, extra_values=("my-private-value-1",))
    assert out == {"cmd": f"curl -H {REDACTED} host", "list": [REDACTED]}
    assert cfg == before


def test_an_env_mapping_nested_under_a_list_is_still_an_env_mapping() -> None:
    cfg = {"agents": [{"name": "a", "env": {"X": "plain-value"}}]}
    assert redact_obj(cfg) == {"agents": [{"name": "a", "env": {"X": REDACTED}}]}


def test_lists_under_an_env_mapping_or_a_secret_key_are_hidden_item_by_item() -> None:
    cfg = {
        "env": {"SOME_VAR": ["plain-value-abc", None], "NESTED": {"inner": "plain-value-def"}},
        "api_keys": ["first-secret-value", "second-secret-value"],
        "tags": ["visible-tag-value"],
    }
    assert redact_obj(cfg) == {
        "env": {"SOME_VAR": [REDACTED, None], "NESTED": {"inner": REDACTED}},
        "api_keys": [REDACTED, REDACTED],
        "tags": ["visible-tag-value"],
    }
    # and the redaction set learned from a config takes the same values
    assert config_secret_values(cfg) == {"first-secret-value", "second-secret-value"}
