"""Shared test setup: fixture paths, and an isolated evalkit cache per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR = FIXTURES / "harbor"
OPENCLAW = HARBOR / "openclaw-dev-jobs"
SKILLSBENCH_JOB = HARBOR / "skillsbench" / "minimax-m2.1+claude-code" / "no_skills"


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["EVALKIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("evalkit-cache"))
    os.environ.setdefault("TZ", "UTC")
