"""Default parameters of every detector, go-code's constants, and config merging.

Each detector reads its parameters from :data:`DEFAULTS` merged with the ``config`` a caller
passes to :func:`evalkit.patterns.detect`, e.g.
``config={"retry_loop": {"min_failing_repeats": 4}, "common": {"verify_regex": r"..."}}``.
Unknown keys raise ``ValueError`` (so a typo never silently keeps the default).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from evalkit.patterns.rules import (
    ACKNOWLEDGE,
    ARCH_ACTION,
    ARCH_MESSAGE,
    ARCH_MISMATCH,
    ARCH_PROBE,
    COMPLETION_CLAIM,
    CONDENSE,
    CONTEXT,
    CONTEXT_EXCEPTIONS,
    EDITOR_COMMANDS_MODIFY,
    EDITOR_COMMANDS_WRITE,
    ERR,
    FILE_CLAIM,
    FINISH_TOOLS,
    GIVING_UP,
    HEDGE,
    HEDGE_EXCUSE,
    INSPECT,
    MODIFY_TOOLS,
    PATH_IN_TEXT,
    PATH_KEYS,
    POLLING,
    READ_TOOLS,
    SHELL_DELETE,
    SHELL_MODIFY,
    SHELL_READ,
    SLEEP,
    SUCCESS,
    TAMPER_COMMAND,
    TAMPER_CONTENT,
    TEST_PATH,
    TIMEOUT_EXCEPTIONS,
    VERBOSE,
    VERIFIER_PATH,
    VERIFY,
    WAIT,
    WRITE_TOOLS,
)  # fmt: skip

# -- go-code trainerd / conclusion-watcher, verbatim (rollouts-gates-qc.md §1.6-1.7) ---------

TRAINERD: dict[str, Any] = {
    #: scorer.go weights; any other type (incl. "") weighs 1.0
    "weights": {
        "retry_loop": 0.5,
        "hedge_assertion": 1.0,
        "unverified_file_claim": 1.0,
        "premature_completion": 1.25,
        "skipped_diagnostic": 1.0,
        "architecture_assumption": 1.0,
    },
    "default_weight": 1.0,
    "penalty_divisor": 5.0,
    #: runner_step_engine.go: count[tool + "\x00" + raw args] >= 3 -> retry_loop, once per key
    "retry_threshold": 3,
    "hedge_phrases": (
        "must be",
        "clearly",
        "obviously",
        "definitely",
        "i assume",
        "probably is",
        "should be",
        "it appears that",
    ),
    "completion_phrases": (
        "done",
        "fixed",
        "complete",
        "completed",
        "resolved",
        "implemented",
        "finished",
        "all set",
    ),
    "architecture_phrases": (
        "the design is",
        "the flow is",
        "this is a bug",
        "the architecture requires",
        "the intended flow is",
        "this is how it works",
        "the system does",
    ),
    "verification_tools": ("run_tests", "go_test", "check", "verify"),
    "verification_bash_substrings": (
        "go test",
        "pytest",
        "npm test",
        "cargo test",
        " test ",
        "-run",
        "check",
        "verify",
    ),
    "exploration_tools": (
        "read_file",
        "grep",
        "glob",
        "list_dir",
        "git_log",
        "git_diff",
        "git_show",
    ),
    "diagnostic_tools": (
        "read_file",
        "grep",
        "glob",
        "bash",
        "list_dir",
        "git_log",
        "git_diff",
        "git_show",
        "search",
    ),
    "write_tools": ("write_file", "edit_file", "patch_file", "delete_file"),
    "destructive_bash_substrings": (
        "rm ",
        "mv ",
        "cp ",
        "chmod ",
        "chown ",
        "sed -i",
        "awk ",
        "truncate",
        "tee ",
        "> /",
        ">> /",
    ),
    "path_regex": (
        r"(?i)\b[\w./\-]+\.(?:go|py|ts|js|jsx|tsx|yaml|yml|json|toml|md|sh|txt|env|cfg|conf)\b"
    ),
    #: ledger.go / plugin.go outputFilePathRe: paths in tool output lines, after a space or at
    #: the start of a line (group 1)
    "output_path_regex": (
        r"(?im)(?:^|[\s\t])([\w./\-]+\.(?:go|py|ts|js|jsx|tsx|yaml|yml|json|toml|md|sh|txt|env|cfg|conf))\b"
    ),
    "bash_tool": "bash",
    #: how many of the latest ledger tool entries premature_completion / architecture_assumption
    #: look at
    "ledger_window": 3,
    #: optional {recorded tool name: go-code tool name} applied before the port (e.g. {"Bash":
    #: "bash", "Read": "read_file"}); empty = exact names, as go-code sees them.
    "tool_aliases": {},
}

# -- per-detector parameters ------------------------------------------------------------------

DEFAULTS: dict[str, dict[str, Any]] = {
    "common": {
        "err_regex": ERR,
        "verify_regex": VERIFY,
        "polling_regex": POLLING,
        "write_tools": WRITE_TOOLS,
        "modify_tools": MODIFY_TOOLS,
        "read_tools": READ_TOOLS,
        "finish_tools": FINISH_TOOLS,
        "path_keys": PATH_KEYS,
        "completion_regex": COMPLETION_CLAIM,
        "inspect_regex": INSPECT,
        #: analyse the main trajectory only (subagent / summarisation trajectories replay
        #: context); False analyses every (sub)trajectory separately
        "main_only": True,
        #: evidence snippets are cut to this many characters
        "evidence_chars": 160,
    },
    "retry_loop": {
        "min_failing_repeats": 3,  # (a) consecutive identical failing calls
        "min_same_output_repeats": 4,  # (b) consecutive identical calls, identical output
        "cycle_calls": 6,  # (c) period-2 cycle length
        "window": 20,  # (d) windowed repeats
        "window_repeats": 5,
    },
    "hedge_assertion": {"hedge_regex": HEDGE, "excuse_regex": HEDGE_EXCUSE},
    "unverified_file_claim": {"claim_regex": FILE_CLAIM},
    "premature_completion": {},
    "skipped_diagnostic": {"lookahead": 2, "verbose_regex": VERBOSE},
    "architecture_assumption": {
        "action_regex": ARCH_ACTION,
        "probe_regex": ARCH_PROBE,
        "mismatch_regex": ARCH_MISMATCH,
        "message_regex": ARCH_MESSAGE,
    },
    "repeated_failed_command": {"min_repeats": 2},
    "false_success_claim": {"max_reward": 0.0},
    "ignored_error_output": {"success_regex": SUCCESS, "acknowledge_regex": ACKNOWLEDGE},
    "edit_without_read": {"shell_read_regex": SHELL_READ},
    "test_tampering": {
        "test_path_regex": TEST_PATH,
        "verifier_path_regex": VERIFIER_PATH,
        "content_regex": TAMPER_CONTENT,
        "command_regex": TAMPER_COMMAND,
    },
    "no_progress": {
        "window": 10,
        "repeat_share": 0.8,
        "same_output_share": 0.7,
        #: long tail: n_steps above this quantile of the passing trials of the same task
        "tail_quantile": 0.9,
        "tail_min_passing": 5,
    },
    "context_exhaustion": {
        "context_regex": CONTEXT,
        "condense_regex": CONDENSE,
        "exceptions": CONTEXT_EXCEPTIONS,
        #: tokens; an int, or {model_name: int}; None disables the prompt_tokens rule
        "context_limit": None,
        "limit_share": 0.9,
    },
    "timeout_burn": {
        "exceptions": TIMEOUT_EXCEPTIONS,
        "sleep_regex": SLEEP,
        "wait_regex": WAIT,
        "long_sleep_s": 10.0,
        "min_wait_calls": 2,
        "budget_share": 0.5,
    },
    "giving_up": {"families": GIVING_UP, "threshold": 0.3},
    "trainerd": TRAINERD,
}

SHELL = {
    "shell_modify": SHELL_MODIFY,
    "shell_delete": SHELL_DELETE,
    "shell_read": SHELL_READ,
    "path_in_text": PATH_IN_TEXT,
    "editor_write": EDITOR_COMMANDS_WRITE,
    "editor_modify": EDITOR_COMMANDS_MODIFY,
}


def merge_config(
    config: Mapping[str, Mapping[str, Any]] | None,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Defaults overlaid with ``config`` (one level deep per section); unknown keys raise.

    Sections of detectors registered by users carry their own defaults (see
    :func:`evalkit.patterns.detector`), passed here in ``defaults``.
    """
    base = copy.deepcopy(dict(DEFAULTS if defaults is None else defaults))
    for section, over in (config or {}).items():
        if section not in base:
            raise ValueError(f"unknown config section {section!r}; known: {sorted(base)}")
        if not isinstance(over, Mapping):
            raise ValueError(f"config[{section!r}] must be a mapping")
        for k, v in over.items():
            if k not in base[section]:
                raise ValueError(f"unknown parameter {section}.{k}; known: {sorted(base[section])}")
            base[section][k] = v
    return base
