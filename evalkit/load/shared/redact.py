"""Secret redaction for anything evalkit copies out of a job folder.

Configs carry environment dicts (agent.env, environment.env, verifier.env) whose values can
be API keys. Everything evalkit puts in a frame, report or file goes through
:func:`redact_obj` (structured data) or :func:`redact_text` (free text) first.

The values to hide are key patterns, the secret-looking variables of the machine, and every
value a loaded job config holds under a secret-looking name (:func:`learn_config_secrets`,
called by the loader): an agent that echoes ``MY_SERVICE_API_KEY`` from its own config is
redacted in every output of the process (:func:`env_secret_values`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Polars is imported where frames are redacted (the log pump needs none)
    import polars as pl

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

#: Value patterns of common provider keys and bearer tokens (valid in Python's re and in
#: Polars' Rust regex).
_KEY_ALTERNATIVES = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_\-]{16,}"
    r"|(?i:bearer)[ \t]+[A-Za-z0-9_\-\.=+/]{16,}"
    r"|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
)
#: A PEM private key: the header, the body when it starts on a new line, the footer if any.
_PEM = (
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\r\n][A-Za-z0-9+/=\r\n \t]*)?"
    r"(?:-----END [A-Z ]*PRIVATE KEY-----)?"
)
#: Keys never start inside a word: ``flask-sqlalchemy-extensions`` is no ``sk-`` key.
SECRET_VALUE_RE = re.compile(rf"(?<![A-Za-z0-9])(?:{_KEY_ALTERNATIVES})|{_PEM}")
#: A superset for Polars (Rust regex has no look-behind), to find the values to redact.
_POLARS_SECRET = rf"(^|[^A-Za-z0-9])(?:{_KEY_ALTERNATIVES})|{_PEM}"

#: Environment variables whose values are secrets although their names do not say so.
SECRET_ENV_NAMES = ("DATABRICKS_HOST", "AZURE_API_BASE")
#: Values too common to be worth hiding (an env var set to "true" hides nothing).
_MIN_SECRET_LEN = 8


def is_secret_key(key: str) -> bool:
    k = key.lower()
    if k in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "max_tokens") or k.endswith(
        "_tokens"
    ):
        return False
    return any(p in k for p in SECRET_KEY_PARTS)


def redact_text(text: str, extra_values: tuple[str, ...] = ()) -> str:
    """Replace key-like substrings (and any of ``extra_values``) with [REDACTED]."""
    out = text
    for v in extra_values:  # literal values first: a pattern could eat part of one
        if v and len(v) >= 6:
            out = out.replace(v, REDACTED)
    # twice: a key glued to the end of another (AKIA...sk-ant-...) has no boundary before it
    # until the first is replaced
    return SECRET_VALUE_RE.sub(REDACTED, SECRET_VALUE_RE.sub(REDACTED, out))


#: Values found under secret-looking names in the job configs this process loaded.
_CONFIG_SECRETS: set[str] = set()


def _secret_name(k: object) -> bool:
    return isinstance(k, str) and (is_secret_key(k) or k in SECRET_ENV_NAMES)


def config_secret_values(obj: Any) -> set[str]:
    """Every scalar value of a JSON-like object held under a secret-looking key or env
    variable name (``agents[].env.MY_SERVICE_API_KEY``, ``verifier.env.DB_PASSWORD``, ...),
    a list's items included (``api_keys: [...]``). Iterative: any nesting depth."""
    found: set[str] = set()
    stack: list[tuple[Any, bool]] = [(obj, False)]
    while stack:
        cur, secret_list = stack.pop()
        if isinstance(cur, dict):
            items = [(v, _secret_name(k)) for k, v in cur.items()]
        elif isinstance(cur, list):
            items = [(v, secret_list) for v in cur]
        else:
            continue
        for v, secret in items:
            if isinstance(v, list):
                stack.append((v, secret))
            elif isinstance(v, dict):
                stack.append((v, False))
            elif secret and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                s = str(v)
                if len(s) >= _MIN_SECRET_LEN and s != REDACTED:
                    found.add(s)
    return found


def learn_config_secrets(obj: Any) -> None:
    """Add the secret values of a loaded config (``config_secret_values``) to the values
    every output of this process hides."""
    _CONFIG_SECRETS.update(config_secret_values(obj))


def env_secret_values(
    environ: Mapping[str, str] | None = None, names: Iterable[str] = ()
) -> tuple[str, ...]:
    """Values that hold secrets: those of the environment variables whose names look like
    one (``*_API_KEY``, ``*_TOKEN``, ``*SECRET*``, ...), of :data:`SECRET_ENV_NAMES` and of
    ``names`` (e.g. the variables passed to a run), and, for this process's environment
    (``environ`` None), the values learned from loaded configs (``learn_config_secrets``).
    Longest first; short values are skipped."""
    learned = _CONFIG_SECRETS if environ is None else set()
    env = os.environ if environ is None else environ
    wanted = set(names) | set(SECRET_ENV_NAMES)
    vals = {
        v
        for k, v in env.items()
        if (k in wanted or is_secret_key(k)) and isinstance(v, str) and len(v) >= _MIN_SECRET_LEN
    }
    return tuple(sorted(vals | learned, key=len, reverse=True))


def redact_series(s: pl.Series, extra_values: tuple[str, ...] = ()) -> pl.Series:
    """:func:`redact_text` over a String Series: a vectorised search (Polars' regex) finds
    the few values that may hold a key, and only those go through Python's regex, so the
    result is exactly ``[redact_text(v, extra_values) for v in s]``."""
    for v in extra_values:
        if v and len(v) >= 6:
            s = s.str.replace_all(v, REDACTED, literal=True)
    hit = s.str.contains(_POLARS_SECRET).fill_null(False)
    if not hit.any():
        return s
    idx = hit.arg_true()
    return s.scatter(idx, [redact_text(v) for v in s.gather(idx).to_list()])


def redact_frame(
    df: pl.DataFrame, columns: Iterable[str] | None = None, extra_values: tuple[str, ...] = ()
) -> pl.DataFrame:
    """``df`` with the given String columns (default: all String columns) redacted."""
    import polars as pl

    cols = [
        c
        for c in (df.columns if columns is None else columns)
        if c in df.columns and df.schema[c] == pl.String
    ]
    if not cols or df.height == 0:
        return df
    return df.with_columns(redact_series(df[c], extra_values) for c in cols)


def redact_obj(obj: Any, *, extra_values: tuple[str, ...] = (), _in_env: bool = False) -> Any:
    """Deep copy of a JSON-like object with secret values replaced.

    Values under secret-looking keys (a list's items included) and every value of an env
    mapping are replaced (env variable names are kept: they say what was passed, never what
    it was); other strings go through :func:`redact_text` (with ``extra_values``).
    """
    if _in_env and not isinstance(obj, (dict, list)):
        return REDACTED if obj not in (None, "") else obj
    if isinstance(obj, dict):
        return {k: _redact_item(str(k), v, extra_values, _in_env) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_obj(v, extra_values=extra_values, _in_env=_in_env) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj, extra_values)
    return obj


def _redact_item(key: str, v: Any, ev: tuple[str, ...], in_env: bool) -> Any:
    """One value of a mapping, by what its key says about it."""
    if in_env or (key.lower() in ENV_KEYS and isinstance(v, dict)):
        return redact_obj(v, extra_values=ev, _in_env=True)  # every value of an env mapping
    if is_secret_key(key):
        if isinstance(v, list):
            return redact_obj(v, extra_values=ev, _in_env=True)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            return REDACTED
    return redact_obj(v, extra_values=ev)
