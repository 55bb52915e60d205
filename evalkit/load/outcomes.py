"""Outcome and error-kind rules: the one documented place.

``error_kind`` classifies ``exception_type`` into Harbor 0.26's error-policy classes
(harbor-format.md §2.1b; api-contract.md):

* agent: the agent's own failure; the reward stays valid.
* infra: sandbox / environment failures; no grading, reward invalid.
* provider: model API failures (rate limits, overload, connection); reward invalid.
* verifier: the verifier could not produce a reward; reward invalid.
* config: authentication, unknown model, bad request, budget...; reward invalid.
* cancelled: CancelledError (Ctrl-C, job cancelled).
* unknown: any other exception type (RuntimeError, ValueError, ...); Harbor treats it as
  retryable with a valid reward.
* none: no exception.

``outcome`` follows goose's rule by default (``outcome_rule="goose"``), first match wins:

1. no usable result.json -> ``incomplete`` (running, crashed, or deleted by resume);
2. reward > 0 and reward >= 1.0 -> ``pass``;
3. reward > 0 and reward < 1.0 -> ``partial``;
4. an exception whose type name contains "timeout" (any case) -> ``timeout``;
5. any other exception -> ``error``;
6. no reward -> ``no-reward``;
7. otherwise (reward <= 0) -> ``fail``.

So a verifier reward beats an exception: a trial that timed out after writing the right
answer passes. ``outcome_rule="strict"`` instead puts exceptions whose kind invalidates the
reward (infra, provider, verifier, config, cancelled) before the reward checks (step 1b).
"""

from __future__ import annotations

import polars as pl

OUTCOMES = ("pass", "partial", "fail", "timeout", "error", "no-reward", "incomplete")
ERROR_KINDS = ("none", "agent", "infra", "provider", "verifier", "config", "cancelled", "unknown")

ERROR_KIND_BY_TYPE: dict[str, str] = {
    **dict.fromkeys(
        [
            "NonZeroAgentExitCodeError",
            "AgentTimeoutError",
            "ContextWindowExceededError",
            "ContextLengthExceededError",
            "OutputTokenExceededError",
            "OutputLengthExceededError",
            "AgentSafetyRefusalError",
            "ContentPolicyViolationError",
        ],
        "agent",
    ),
    **dict.fromkeys(
        [
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
        "infra",
    ),
    **dict.fromkeys(
        [
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
        "provider",
    ),
    **dict.fromkeys(
        [
            "VerifierTimeoutError",
            "RewardFileNotFoundError",
            "RewardFileEmptyError",
            "VerifierOutputParseError",
        ],
        "verifier",
    ),
    **dict.fromkeys(
        [
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
        "config",
    ),
    "CancelledError": "cancelled",
}

#: Kinds whose reward Harbor 0.26 treats as valid (error policy ``has_valid_reward``).
REWARD_VALID_KINDS = ("none", "agent", "unknown")


def error_kind_expr(exception_type: pl.Expr) -> pl.Expr:
    """error_kind from an exception type name column (qualified names use the last part)."""
    name = exception_type.str.split(".").list.last()
    mapped = name.replace_strict(ERROR_KIND_BY_TYPE, default=None, return_dtype=pl.String)
    return (
        pl.when(exception_type.is_null() | (exception_type == ""))
        .then(pl.lit("none"))
        .when(mapped.is_not_null())
        .then(mapped)
        .when(name.str.starts_with("GKE"))
        .then(pl.lit("infra"))
        .when(name.str.starts_with("ApiConnection") & name.str.ends_with("Error"))
        .then(pl.lit("provider"))
        .otherwise(pl.lit("unknown"))
    )


def outcome_expr(
    reward: pl.Expr,
    exception_type: pl.Expr,
    result_present: pl.Expr,
    error_kind: pl.Expr,
    rule: str = "goose",
) -> pl.Expr:
    """The outcome column (see the module docstring for the rule). A NaN reward is no
    reward (the loader never makes one; a frame built by hand may)."""
    if rule not in ("goose", "strict"):
        raise ValueError(f"outcome_rule={rule!r}: use 'goose' or 'strict'")
    reward = reward.fill_nan(None)
    has_exc = exception_type.is_not_null() & (exception_type != "")
    is_timeout = exception_type.str.to_lowercase().str.contains("timeout")
    exc_outcome = pl.when(is_timeout).then(pl.lit("timeout")).otherwise(pl.lit("error"))
    chain = pl.when(~result_present.fill_null(False)).then(pl.lit("incomplete"))
    if rule == "strict":
        invalidating = error_kind.is_in(["infra", "provider", "verifier", "config", "cancelled"])
        chain = chain.when(has_exc & invalidating).then(exc_outcome)
    return (
        chain.when((reward > 0) & (reward >= 1.0))
        .then(pl.lit("pass"))
        .when((reward > 0) & (reward < 1.0))
        .then(pl.lit("partial"))
        .when(has_exc)
        .then(exc_outcome)
        .when(reward.is_null())
        .then(pl.lit("no-reward"))
        .otherwise(pl.lit("fail"))
    )


def reward_valid_expr(recorded: pl.Expr, has_rewards: pl.Expr, error_kind: pl.Expr) -> pl.Expr:
    """Harbor 0.26's reward_valid: recorded value, else rewards present and a valid-reward kind."""
    computed = has_rewards & error_kind.is_in(list(REWARD_VALID_KINDS))
    return pl.coalesce(recorded, computed)
