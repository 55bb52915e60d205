"""Secret redaction for anything evalkit copies out of a job folder.

Configs carry environment dicts (agent.env, environment.env, verifier.env) whose values can
be API keys. Everything evalkit puts in a frame, report or file goes through
:func:`redact_obj` (structured data) or :func:`redact_text` (free text) first.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[REDACTED]"

#: Keys whose values are always hidden (case-insensitive substring match).
SECRET_KEY_PARTS = (
    "api_key",
    "apikey",
    "api-key",
    "secret",
    "token",
    "password",
    "passwd",
    "credential",
    "auth",
    "private_key",
    "access_key",
    "session_key",
    "cookie",
)
#: Dict keys whose whole value is a mapping of environment variables.
ENV_KEYS = ("env", "environment_variables", "env_vars")

#: Value patterns of common provider keys and bearer tokens.
SECRET_VALUE_RE = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,}|(?i:bearer)\s+[A-Za-z0-9_\-\.=]{16,}"
    r"|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})"
)


def is_secret_key(key: str) -> bool:
    k = key.lower()
    if k in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "max_tokens") or k.endswith(
        "_tokens"
    ):
        return False
    return any(p in k for p in SECRET_KEY_PARTS)


def redact_text(text: str, extra_values: tuple[str, ...] = ()) -> str:
    """Replace key-like substrings (and any of ``extra_values``) with [REDACTED]."""
    out = SECRET_VALUE_RE.sub(REDACTED, text)
    for v in extra_values:
        if v and len(v) >= 6:
            out = out.replace(v, REDACTED)
    return out


def redact_obj(obj: Any, *, _in_env: bool = False) -> Any:
    """Deep copy of a JSON-like object with secret values replaced.

    Values under secret-looking keys and every value of an env mapping are replaced (env
    variable names are kept: they say what was passed, never what it was); other strings
    go through :func:`redact_text`.
    """
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            ks = str(k)
            if _in_env and not isinstance(v, (dict, list)):
                out[k] = REDACTED if v not in (None, "") else v
            elif ks.lower() in ENV_KEYS and isinstance(v, dict):
                out[k] = redact_obj(v, _in_env=True)
            elif is_secret_key(ks) and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out[k] = REDACTED
            else:
                out[k] = redact_obj(v)
        return out
    if isinstance(obj, list):
        return [redact_obj(v, _in_env=_in_env) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj)
    return obj
