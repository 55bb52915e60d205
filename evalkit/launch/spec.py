"""What to run (:class:`RunSpec`) and the checks that need no Docker and no Harbor.

``validate(spec)`` returns every problem it finds (never only the first); preflight adds
the checks that look at the machine. API-key checks name the missing variables and never
read more than their presence.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

JOB_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/\S+$")
IMPORT_PATH_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
DATASET_RE = re.compile(r"^[^@\s]+@[^@\s]+$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Harbor agents that take no model.
MODEL_FREE_AGENTS = frozenset({"oracle", "nop"})
#: Environment variables a provider needs; "A|B" means either is enough.
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "google": ("GOOGLE_API_KEY|GEMINI_API_KEY",),
    "gemini": ("GEMINI_API_KEY|GOOGLE_API_KEY",),
    "databricks": ("DATABRICKS_HOST", "DATABRICKS_TOKEN"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY|TOGETHER_API_KEY",),
    "fireworks_ai": ("FIREWORKS_API_KEY|FIREWORKS_AI_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_API_BASE"),
}
#: Providers that run locally or need no key.
KEYLESS_PROVIDERS = frozenset(
    {"scripted", "ollama", "ollama_chat", "vllm", "hosted_vllm", "lm_studio", "local"}
)
#: Bundled scripted agent (agents/evalkit_scripted, outside the evalkit package).
SCRIPTED_AGENT = "evalkit_scripted.agent:ScriptedAgent"


@dataclass(frozen=True)
class Problem:
    """One thing that stops a launch (``kind`` groups them: spec, keys, docker, ...)."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


@dataclass
class RunSpec:
    """A Harbor job to run. Lists may be given as any sequence; paths as str or Path."""

    agent: str | None = None
    agent_import_path: str | None = None
    model: str | None = None
    dataset: str | None = None
    paths: Sequence[Path] = ()
    tasks: Sequence[str] = ()
    exclude_tasks: Sequence[str] = ()
    attempts: int = 1
    concurrency: int = 4
    env: str = "docker"
    timeout_multiplier: float = 1.0
    agent_timeout_multiplier: float | None = None
    verifier_timeout_multiplier: float | None = None
    agent_setup_timeout_multiplier: float | None = None
    environment_build_timeout_multiplier: float | None = None
    max_retries: int = 0
    retry_include: Sequence[str] | None = None
    retry_exclude: Sequence[str] | None = None
    agent_kwargs: Mapping[str, Any] = field(default_factory=dict)
    pass_env: Sequence[str] = ()
    job_name: str | None = None
    runs_root: Path = Path("runs")
    #: extra PYTHONPATH entries for Harbor's process (where a custom agent lives)
    agent_pythonpath: Sequence[Path] = ()

    def __post_init__(self) -> None:
        self.paths = tuple(Path(p) for p in _as_list(self.paths))
        self.tasks = tuple(_as_list(self.tasks))
        self.exclude_tasks = tuple(_as_list(self.exclude_tasks))
        self.pass_env = tuple(_as_list(self.pass_env))
        self.retry_include = (
            None if self.retry_include is None else tuple(_as_list(self.retry_include))
        )
        self.retry_exclude = (
            None if self.retry_exclude is None else tuple(_as_list(self.retry_exclude))
        )
        self.agent_kwargs = dict(self.agent_kwargs or {})
        self.runs_root = Path(self.runs_root)
        self.agent_pythonpath = tuple(Path(p) for p in _as_list(self.agent_pythonpath))

    @property
    def agent_label(self) -> str:
        """Short agent name for job names and messages."""
        if self.agent:
            return self.agent
        if self.agent_import_path:
            return self.agent_import_path.split(":")[-1]
        return "agent"

    @property
    def provider(self) -> str | None:
        return self.model.split("/", 1)[0].lower() if self.model and "/" in self.model else None

    def effective_timeouts(self) -> dict[str, float]:
        """All five Harbor timeout multipliers as they will apply (None -> general one)."""
        base = float(self.timeout_multiplier)
        out = {"timeout_multiplier": base}
        for name in (
            "agent_timeout_multiplier",
            "verifier_timeout_multiplier",
            "agent_setup_timeout_multiplier",
            "environment_build_timeout_multiplier",
        ):
            v = getattr(self, name)
            out[name] = base if v is None else float(v)
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Path):
                v = str(v)
            elif isinstance(v, tuple):
                v = [str(x) for x in v]
            out[f.name] = v
        return out


def _as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    if isinstance(v, str | Path):
        return [v]
    return list(v)


# -- tasks ----------------------------------------------------------------------------


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file()


def local_tasks(path: Path) -> list[str]:
    """Task names in a local task folder (itself) or dataset folder (its task subfolders)."""
    if is_task_dir(path):
        return [path.name]
    if not path.is_dir():
        return []
    return sorted(p.name for p in path.iterdir() if p.is_dir() and is_task_dir(p))


def select_tasks(names: Sequence[str], include: Sequence[str], exclude: Sequence[str]) -> list[str]:
    """Harbor's filter (glob patterns on task names): include, then exclude."""
    picked = [n for n in names if not include or any(fnmatch.fnmatchcase(n, p) for p in include)]
    return [n for n in picked if not any(fnmatch.fnmatchcase(n, p) for p in exclude)]


def resolve_tasks(spec: RunSpec) -> tuple[dict[Path, list[str]], list[Problem]]:
    """For local paths: the exact task names per path, after include/exclude."""
    per_path: dict[Path, list[str]] = {}
    problems: list[Problem] = []
    unmatched = set(spec.tasks)
    for path in spec.paths:
        if not path.exists():
            problems.append(Problem("tasks", f"task path does not exist: {path}"))
            continue
        names = local_tasks(path)
        if not names:
            problems.append(Problem("tasks", f"no Harbor task (a folder with task.toml) in {path}"))
            continue
        for pat in spec.tasks:
            if any(fnmatch.fnmatchcase(n, pat) for n in names):
                unmatched.discard(pat)
        chosen = names if is_task_dir(path) else select_tasks(names, spec.tasks, spec.exclude_tasks)
        per_path[path] = chosen
    if per_path and unmatched:
        problems.append(
            Problem("tasks", f"--task pattern(s) matched no task: {', '.join(sorted(unmatched))}")
        )
    if spec.paths and not problems and not any(per_path.values()):
        problems.append(Problem("tasks", "the task selection is empty"))
    return per_path, problems


def task_digest(task_dir: Path) -> str:
    """sha256 over a task folder's files (relative path + bytes), in name order."""
    h = hashlib.sha256()
    for p in sorted(task_dir.rglob("*")):
        if p.is_file() and not any(part.startswith(".git") for part in p.parts):
            h.update(p.relative_to(task_dir).as_posix().encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


# -- validation -------------------------------------------------------------------------


def missing_keys(provider: str | None, environ: Mapping[str, str]) -> list[str]:
    """Names of the provider's required variables that are unset or empty."""
    missing = []
    for req in PROVIDER_KEYS.get(provider or "", ()):
        alts = req.split("|")
        if not any(environ.get(a) for a in alts):
            missing.append(" or ".join(alts))
    return missing


def job_dir_for(runs_root: Path, job_name: str) -> Path:
    """The job folder, refusing any name or symlink that would leave the runs root."""
    if not JOB_NAME_RE.match(job_name):
        raise ValueError(f"invalid job name {job_name!r}: must match {JOB_NAME_RE.pattern}")
    root = runs_root.resolve()
    job_dir = (root / job_name).resolve()
    if job_dir.parent != root:
        raise ValueError(f"job folder {job_dir} is not directly inside the runs root {root}")
    return job_dir


def validate(spec: RunSpec, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """Every problem with the spec itself (no Docker, no Harbor needed)."""
    env = os.environ if environ is None else environ
    probs = [
        *_agent_problems(spec),
        *_task_source_problems(spec),
        *_setting_problems(spec),
        *_environment_problems(spec, env),
    ]
    if spec.paths:
        probs += resolve_tasks(spec)[1]
    return probs


def _agent_problems(spec: RunSpec) -> list[Problem]:
    """The agent (a name or an import path, exactly one) and the model it needs."""
    probs: list[Problem] = []
    if bool(spec.agent) == bool(spec.agent_import_path):
        probs.append(
            Problem(
                "spec",
                "give exactly one of agent (a Harbor agent name) or agent_import_path (module:Class)",
            )
        )
    if spec.agent_import_path and not IMPORT_PATH_RE.match(spec.agent_import_path):
        probs.append(
            Problem(
                "spec",
                f"agent import path {spec.agent_import_path!r} is not of the form module.path:ClassName",
            )
        )
    needs_model = bool(spec.agent) and spec.agent not in MODEL_FREE_AGENTS
    if spec.model is None:
        if needs_model:
            probs.append(Problem("spec", f"agent {spec.agent!r} needs a model (provider/model)"))
    elif not MODEL_RE.match(spec.model):
        probs.append(Problem("spec", f"model {spec.model!r} is not of the form provider/model"))
    return probs


def _task_source_problems(spec: RunSpec) -> list[Problem]:
    """Where the tasks come from: a registry dataset or local paths, exactly one."""
    probs: list[Problem] = []
    if bool(spec.dataset) == bool(spec.paths):
        probs.append(
            Problem(
                "spec",
                "give exactly one of dataset (name@version) or paths (local task or dataset folders)",
            )
        )
    if spec.dataset and not DATASET_RE.match(spec.dataset):
        probs.append(Problem("spec", f"dataset {spec.dataset!r} is not of the form name@version"))
    return probs


def _setting_problems(spec: RunSpec) -> list[Problem]:
    """Counts and timeouts out of range, and a job name that would leave the runs root."""
    probs: list[Problem] = []
    if spec.attempts < 1:
        probs.append(Problem("spec", f"attempts must be >= 1 (got {spec.attempts})"))
    if spec.concurrency < 1:
        probs.append(Problem("spec", f"concurrency must be >= 1 (got {spec.concurrency})"))
    if spec.max_retries < 0:
        probs.append(Problem("spec", f"max_retries must be >= 0 (got {spec.max_retries})"))
    for name, v in spec.effective_timeouts().items():
        if not v > 0:
            probs.append(Problem("spec", f"{name} must be > 0 (got {v})"))
    if spec.job_name is not None:
        try:
            job_dir_for(spec.runs_root, spec.job_name)
        except ValueError as exc:
            probs.append(Problem("spec", str(exc)))
    return probs


def _environment_problems(spec: RunSpec, env: Mapping[str, str]) -> list[Problem]:
    """Names given to pass_env that are not variable names or not set, and the provider's
    key variables that are not set."""
    probs: list[Problem] = []
    bad_env = [n for n in spec.pass_env if not ENV_NAME_RE.match(n)]
    if bad_env:
        probs.append(
            Problem(
                "spec",
                f"not environment variable names: {', '.join(bad_env)} (pass names, never values)",
            )
        )
    keys = missing_keys(spec.provider, env)
    if keys:
        probs.append(
            Problem(
                "keys",
                f"provider {spec.provider!r} needs these environment variables, which are not set: {', '.join(keys)}",
            )
        )
    unset = [n for n in spec.pass_env if ENV_NAME_RE.match(n) and not env.get(n)]
    if unset:
        probs.append(
            Problem("keys", f"pass_env names variables that are not set: {', '.join(unset)}")
        )
    return probs
