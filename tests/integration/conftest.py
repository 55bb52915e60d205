"""The integration tier gate: skip unless EVALKIT_INTEGRATION=1; then FAIL (never skip)
when the tier is missing. Set it up with ``bash .ci/integration.sh up`` and source
``.ci/work/integration.env`` (DOCKER_HOST, DOCKER_CONFIG, EVALKIT_HARBOR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "benchmarks" / "smoke-tasks"
BASE_IMAGE = "evalkit/base:local"


def tier_problems() -> list[str]:
    from evalkit.launch import RunSpec, preflight

    report = preflight(RunSpec(agent="oracle", paths=[SMOKE], runs_root=ROOT / "runs"))
    problems = [str(p) for p in report.problems]
    if not any(p.startswith("[docker] Docker engine") for p in problems):
        try:
            import docker

            client = docker.from_env(timeout=10)
            client.images.get(BASE_IMAGE)
            client.close()
        except Exception as exc:
            problems.append(f"[docker] base image {BASE_IMAGE} missing ({type(exc).__name__})")
    return problems


@pytest.fixture(scope="session")
def tier() -> str:
    """The Harbor executable, once the tier is known to be complete."""
    if os.environ.get("EVALKIT_INTEGRATION") != "1":
        pytest.skip(
            "integration tier not requested: run `bash .ci/integration.sh up`, source .ci/work/integration.env, set EVALKIT_INTEGRATION=1"
        )
    problems = tier_problems()
    if problems:
        pytest.fail(
            "EVALKIT_INTEGRATION=1 but the integration tier is missing:\n  "
            + "\n  ".join(problems),
            pytrace=False,
        )
    from evalkit.launch import find_harbor

    return find_harbor()
