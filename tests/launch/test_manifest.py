"""The frozen manifest (Kedi's rules): digest without creation time or location, refusal
of different settings, credential-like keys and token-like values rejected."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit.launch import manifest as man


def make(created: datetime | None = None, **over: object) -> dict:
    kw = dict(
        job_name="j",
        versions={"harbor": "0.26.0", "evalkit": "0.1.0"},
        agent={"name": "oracle", "import_path": None, "kwargs": {}, "pass_env": []},
        model=None,
        environment={"type": "docker"},
        tasks={"source": "local", "names": ["a", "b"], "include": [], "exclude": [], "digests": {}},
        attempts=2,
        concurrency=4,
        timeouts={"timeout_multiplier": 1.0},
        retry={"max_retries": 0, "exclude_exceptions": ["Z", "A"]},
        harbor_settings={},
        location={"runs_root": "/somewhere"},
        created_at=created,
    )
    kw.update(over)
    return man.build_manifest(**kw)  # type: ignore[arg-type]


def test_digest_ignores_creation_time_and_location() -> None:
    a = make(datetime(2026, 1, 1, tzinfo=UTC))
    b = make(datetime(2027, 5, 5, tzinfo=UTC), location={"runs_root": "/elsewhere"})
    assert a["created_at"] != b["created_at"] and a["digest"] == b["digest"] == man.digest_of(b)
    assert a["n_trials"] == 4
    assert a["retry"]["exclude_exceptions"] == ["A", "Z"]  # Harbor's sets come unordered
    assert make(attempts=3)["digest"] != a["digest"]
    assert make(versions={"harbor": "0.27.0", "evalkit": "0.1.0"})["digest"] != a["digest"]


def test_write_once_then_confirm_or_refuse(tmp_path: Path) -> None:
    m = make()
    path = man.write_manifest(tmp_path, m)
    first = path.read_text()
    assert man.write_manifest(tmp_path, make(datetime(2030, 1, 1, tzinfo=UTC))) == path
    assert path.read_text() == first  # never rewritten
    assert man.check_existing(tmp_path, m)["digest"] == m["digest"]
    with pytest.raises(man.ManifestMismatch) as err:
        man.write_manifest(tmp_path, make(attempts=5, concurrency=1))
    assert err.value.differences == ["attempts", "concurrency", "n_trials"]
    assert path.read_text() == first
    assert man.check_existing(tmp_path / "none", m) is None


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "OPENAI_API_KEY",
        "auth_token",
        "password",
        "secret",
        "Authorization",
        "private-key",
        "accessKey",
    ],
)
def test_credential_like_keys(key: str) -> None:
    assert man.is_credential_key(key)
    assert man.credential_problems({"outer": {key: "value"}}) == [
        f"credential-like key outer.{key}"
    ]


@pytest.mark.parametrize(
    "key", ["max_tokens", "temperature", "keyword", "monkey", "variant", "seed", "token_budget_k"]
)
def test_ordinary_keys(key: str) -> None:
    if key == "token_budget_k":  # conservative: "token" as a word is flagged
        assert man.is_credential_key(key)
    else:
        assert not man.is_credential_key(key)


def test_templates_allowed_but_token_values_rejected(tmp_path: Path) -> None:
    assert man.credential_problems({"env": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}}) == []
    found = man.credential_problems(
        {"kwargs": {"note": "sk-abcdefghijklmnop1234"}}, check_keys=False
    )
    assert found == ["token-like value at kwargs.note"]
    assert "sk-abc" not in str(found)
    bad = make(agent={"name": "x", "kwargs": {"header": "ghp_abcdefghijklmnopqrstuvwxyz"}})
    with pytest.raises(ValueError, match=r"token-like value at agent\.kwargs\.header"):
        man.write_manifest(tmp_path, bad)
    assert not (tmp_path / man.MANIFEST_FILE).exists()
