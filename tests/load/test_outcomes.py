"""Outcome, error_kind and reward_valid rules (load/outcomes.py).

Oracles: the error-kind lists of api-contract.md / harbor-format.md §2.1b, and goose's status
rule as anchors.md words it (reward beats exception; "timeout" in the type name, any case).
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.outcomes import (
    ERROR_KINDS,
    OUTCOMES,
    error_kind_expr,
    outcome_expr,
    reward_valid_expr,
)

# api-contract.md "error_kind" lists, copied by hand (not from the module).
CONTRACT_KINDS: dict[str, list[str]] = {
    "agent": [
        "NonZeroAgentExitCodeError",
        "AgentTimeoutError",
        "ContextWindowExceededError",
        "ContextLengthExceededError",
        "OutputTokenExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    ],
    "infra": [
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "SandboxLikelyOutOfMemoryError",
        "MemoryLimitExceededError",
        "SSHAccessError",
        "RuntimeRequestError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
    ],
    "provider": [
        "ApiError",
        "ApiRateLimitError",
        "ApiInternalServerError",
        "ApiOverloadedError",
        "ApiResponseStalledError",
        "UnknownApiError",
        "NetworkConnectionError",
        "ApiUsageLimitError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "APIError",
        "Timeout",
    ],
    "verifier": [
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    ],
    "config": [
        "AgentAuthenticationError",
        "ModelNotFoundError",
        "ApiProviderResourceNotFoundError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "BadRequestError",
        "UnsupportedModelParametersError",
        "UnprocessableEntityError",
        "UnsupportedParamsError",
        "APIResponseValidationError",
        "BudgetExceededError",
        "RegradeError",
    ],
    "cancelled": ["CancelledError"],
}
CONTRACT = {name: kind for kind, names in CONTRACT_KINDS.items() for name in names}


def _oracle_kind(exc: str | None) -> str:
    """error_kind as api-contract.md states it, in plain Python."""
    if exc is None or exc == "":
        return "none"
    name = exc.split(".")[-1]
    if name in CONTRACT:
        return CONTRACT[name]
    if name.startswith("GKE"):
        return "infra"
    if name.startswith("ApiConnection") and name.endswith("Error"):
        return "provider"
    return "unknown"


def _oracle_outcome(reward, exc, present, rule="goose") -> str:
    """goose's status rule (anchors.md), plus the strict variant of the module docstring."""
    if not present:
        return "incomplete"
    has_exc = bool(exc)
    timeout = has_exc and "timeout" in exc.lower()
    exc_out = "timeout" if timeout else "error"
    invalidating = ("infra", "provider", "verifier", "config", "cancelled")
    if rule == "strict" and has_exc and _oracle_kind(exc) in invalidating:
        return exc_out
    if reward is not None and reward > 0 and reward >= 1.0:
        return "pass"
    if reward is not None and reward > 0:
        return "partial"
    if has_exc:
        return exc_out
    if reward is None:
        return "no-reward"
    return "fail"


def _kinds(names: list[str | None]) -> list[str]:
    df = pl.DataFrame({"e": names}, schema={"e": pl.String})
    return df.select(error_kind_expr(pl.col("e")).alias("k"))["k"].to_list()


def _outcomes(rows: list[tuple], rule: str = "goose") -> list[str]:
    df = pl.DataFrame(rows, schema={"r": pl.Float64, "e": pl.String, "p": pl.Boolean}, orient="row")
    kind = error_kind_expr(pl.col("e"))
    return df.select(outcome_expr(pl.col("r"), pl.col("e"), pl.col("p"), kind, rule).alias("o"))[
        "o"
    ].to_list()


def test_every_contract_name_maps_to_its_kind() -> None:
    names = list(CONTRACT)
    assert _kinds(names) == [CONTRACT[n] for n in names]


def test_qualified_prefix_and_fallback_names() -> None:
    got = _kinds(
        [
            None,
            "",
            "asyncio.exceptions.CancelledError",  # last dotted part is classified
            "harbor.trial.errors.AgentTimeoutError",
            "GKEPodEvictedError",  # GKE* -> infra
            "ApiConnectionTimeoutError",  # ApiConnection*Error -> provider
            "ApiConnectionTimeout",  # no Error suffix: not the pattern
            "RuntimeError",
            "ValueError",
            "agenttimeouterror",  # names are case-sensitive
        ]
    )
    assert got == [
        "none",
        "none",
        "cancelled",
        "agent",
        "infra",
        "provider",
        "unknown",
        "unknown",
        "unknown",
        "unknown",
    ]


_EXC = st.sampled_from(
    [
        None,
        "",
        *CONTRACT,
        "RuntimeError",
        "GKEQuotaError",
        "ApiConnectionResetError",
        "my.pkg.VerifierTimeoutError",
        "SomethingTIMEOUTish",
    ]
)
_REWARD = st.none() | st.floats(-2, 3, allow_nan=False) | st.sampled_from([0.0, 1.0, 0.5, -1.0])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_EXC), min_size=1, max_size=20))
def test_error_kind_matches_the_contract(rows) -> None:
    names = [r[0] for r in rows]
    got = _kinds(names)
    assert got == [_oracle_kind(n) for n in names]
    assert set(got) <= set(ERROR_KINDS)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_REWARD, _EXC, st.booleans()), min_size=1, max_size=20),
    st.sampled_from(["goose", "strict"]),
)
def test_outcome_matches_the_rule(rows, rule) -> None:
    got = _outcomes(rows, rule)
    assert got == [_oracle_outcome(r, e, p, rule) for r, e, p in rows]
    assert set(got) <= set(OUTCOMES)


def test_goose_rule_worked_examples() -> None:
    rows = [
        (1.0, "AgentTimeoutError", True),  # reward beats the timeout
        (2.0, None, True),  # > 1 is still a pass
        (0.5, "RuntimeError", True),
        (0.0, "AgentTimeoutError", True),
        (0.0, "RuntimeError", True),
        (None, None, True),
        (0.0, None, True),
        (-1.0, None, True),
        (1.0, None, False),  # no result.json: incomplete whatever the reward
        (1.0, None, None),  # unknown presence counts as absent
        (None, "", True),  # empty type is no exception
    ]
    assert _outcomes(rows) == [
        "pass",
        "pass",
        "partial",
        "timeout",
        "error",
        "no-reward",
        "fail",
        "fail",
        "incomplete",
        "incomplete",
        "no-reward",
    ]


def test_strict_rule_puts_reward_invalidating_exceptions_first() -> None:
    rows = [
        (1.0, "ApiRateLimitError", True),  # provider: reward invalid
        (1.0, "EnvironmentStartTimeoutError", True),  # infra, "timeout" in the name
        (1.0, "AgentTimeoutError", True),  # agent: reward stays valid
        (1.0, "RuntimeError", True),  # unknown: reward stays valid
        (0.5, "CancelledError", True),
        (1.0, "ApiRateLimitError", False),  # incomplete still comes first
    ]
    assert _outcomes(rows, "strict") == ["error", "timeout", "pass", "pass", "error", "incomplete"]
    assert _outcomes(rows, "goose") == ["pass", "pass", "pass", "pass", "partial", "incomplete"]


def test_a_nan_reward_is_no_reward() -> None:
    # NaN sorts above every float in Polars, so "NaN >= 1" would read as a pass
    rows = [(float("nan"), None, True), (float("nan"), "AgentTimeoutError", True)]
    assert _outcomes(rows) == ["no-reward", "timeout"]


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="outcome_rule='harbor'"):
        outcome_expr(pl.col("r"), pl.col("e"), pl.col("p"), pl.col("k"), "harbor")


def test_reward_valid_recorded_value_wins_else_computed() -> None:
    df = pl.DataFrame(
        {
            "rec": [True, False, None, None, None, None, None],
            "has": [False, True, True, True, True, False, None],
            "kind": ["infra", "none", "none", "agent", "provider", "none", "unknown"],
        },
        schema={"rec": pl.Boolean, "has": pl.Boolean, "kind": pl.String},
    )
    got = df.select(reward_valid_expr(pl.col("rec"), pl.col("has"), pl.col("kind")).alias("v"))
    # Harbor 0.26: rewards non-empty and a has_valid_reward kind (none, agent, unknown)
    assert got["v"].to_list() == [True, False, True, True, False, False, None]
